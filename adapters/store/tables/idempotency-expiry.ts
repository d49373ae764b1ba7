import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../../application/index.ts';
import { translated } from '../sql-dialect.ts';
import type { PetStoreDatabase } from '../schema.ts';
import type { SqlPetStore } from '../sql-pet-store.ts';
import type { BackgroundWork } from '../../background/fair-share.ts';

/** How often expired records are looked for: each is deleted within a minute of expiring. */
export const EXPIRY_SWEEP_MS = 30_000;
/** The turn of expiry sweeps among the owners of background work. */
const SWEEPS = 'idempotency expiry';
/** Records one statement deletes at most: a sweep never holds the writer long; a full batch is followed by another. */
export const EXPIRY_BATCH = 500;

export interface IdempotencyExpiry {
  /** Deletes expired records a batch at a time until none is left; resolves with how many it deleted. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

export interface IdempotencyExpiryOptions {
  readonly clock: Clock;
  readonly logger?: Logger | undefined;
  readonly everyMs?: number;
  readonly batch?: number;
  /** Where each batch takes its turn beside the process's other background work. */
  readonly background?: BackgroundWork;
}

/**
 * Deletes expired `Idempotency-Key` records in the background, off the request path. Several
 * instances may sweep one database at once: each statement deletes only rows expired when it runs (a
 * record renewed meanwhile is kept), and a row another instance deleted first is simply not found.
 */
export function startIdempotencyExpiry(
  store: Pick<SqlPetStore, 'db' | 'dialect' | 'writeOutsideLog'>, options: IdempotencyExpiryOptions,
): IdempotencyExpiry {
  const { clock, logger, everyMs = EXPIRY_SWEEP_MS, batch = EXPIRY_BATCH } = options;
  // Beside the groups on SQLite's writer: these deletes change neither the log nor the catalogue.
  const write = store.writeOutsideLog ?? (<T>(work: (db: Kysely<PetStoreDatabase>) => Promise<T>) => work(store.db));
  let running: Promise<number> | undefined;
  let closed = false;
  let failing = false;

  const inTurn = <T>(work: () => Promise<T>) => (options.background ? options.background.run(SWEEPS, work) : work());
  const deleteBatch = (now: string) => inTurn(() => translated(store.dialect, () => write(async (db) => {
    const result = await sql`
      delete from idempotency_keys
      where expires_at <= ${now} and (scope, idempotency_key) in (
        select scope, idempotency_key from idempotency_keys where expires_at <= ${now} order by expires_at limit ${batch})`.execute(db);
    return Number(result.numAffectedRows ?? 0n);
  })));

  const sweepAll = async () => {
    let deleted = 0;
    for (;;) {
      const count = await deleteBatch(clock.now().toISOString());
      deleted += count;
      if (count < batch || closed) return deleted;
      // Give requests' writes a turn between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  const sweep = () => (running ??= sweepAll().finally(() => (running = undefined)));

  const timer = setInterval(() => {
    sweep().then(() => {
      if (failing) logger?.info('expired idempotency keys are deleted again');
      failing = false;
    }, (error: unknown) => {
      // The database is away or busy: the next sweep tries again. Said once, not every sweep.
      if (!failing) logger?.warn({ reason: (error as Error).message }, 'could not delete expired idempotency keys; trying again later');
      failing = true;
    });
  }, everyMs);
  timer.unref();

  return {
    sweep,
    async close() {
      closed = true;
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
