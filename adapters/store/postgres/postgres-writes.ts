import { CompiledQuery, sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { IdempotencyKeyTaken, StreamVersionConflict } from '../../../application/index.ts';
import { petStreamId } from '../../../domain/index.ts';
import type { AppendResult, Clock } from '../../../application/index.ts';
import type { AppendRequest, AppendRows } from '../append-plan.ts';
import { appendAll } from '../append-group.ts';
import { GroupAppendFailed } from '../append-group.ts';
import type { GroupOutcome, GroupTransaction, PendingAppend } from '../append-group.ts';
import type { PetRow } from '../pet-rows.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { translated } from '../sql-dialect.ts';
import type { SqlWrites } from '../sql-pet-store.ts';
import { APPEND_LOCK, isUnavailability, postgresSqlDialect } from './postgres-sql-dialect.ts';
import { prepared } from './postgres-pool.ts';
import { LOG_CHANNEL } from './postgres-commit-signal.ts';

/** At most this many streams of drawn ids are remembered as new (far more than appends in flight). */
const MOST_FRESH_STREAMS = 10_000;

/** At most this many appends a group: a bound on one transaction's size and on what a failure makes run again. */
export const GROUP_MOST_APPENDS = 256;

export interface PostgresWrites extends SqlWrites {
  /** Resolves when every append asked for so far has committed or failed. */
  drain(): Promise<void>;
}

/**
 * Appends on PostgreSQL, committed in groups as on SQLite: the appends asked for while the previous
 * group commits share one transaction and one flush (`synchronous_commit` stays on; nobody is answered
 * before the commit). A group takes the append lock first, so groups of
 * all instances commit one after the other in the order of their positions, and a reader of
 * `position > n` never skips an event still in flight; none of them waits for the lock while holding rows.
 */
export function createPostgresWrites(db: Kysely<PetStoreDatabase>, clock: Clock, committed?: (position: number) => void): PostgresWrites {
  let waiting: PendingAppend[] = [];
  let scheduled = false;
  let flushing: Promise<void> | undefined;

  let idsWanted: { resolve: (id: number) => void; reject: (error: unknown) => void }[] = [];
  /**
   * The streams of the ids this instance drew and has not appended to yet: they have no events, since
   * the sequence never hands an id out twice (and the keys of `events` and `pets` refuse a stream that
   * did), so their version is known without a read. Bounded: an id drawn for a creation that then fails
   * before appending is forgotten with the oldest.
   */
  const freshStreams = new Set<string>();

  /**
   * The ids asked for during one turn, drawn in one query. A sequence is outside transactions anyway:
   * drawn on any connection, never handed out twice.
   */
  async function drawIds(): Promise<void> {
    const wanted = idsWanted;
    idsWanted = [];
    try {
      const { rows } = await translated(postgresSqlDialect, () =>
        sql<{ id: number }>`select nextval('pet_ids') as id from generate_series(1, ${wanted.length}::integer)`.execute(db));
      wanted.forEach((waiting, index) => {
        const id = rows[index]!.id;
        freshStreams.add(petStreamId(id));
        waiting.resolve(id);
      });
      for (const stream of freshStreams) {
        if (freshStreams.size <= MOST_FRESH_STREAMS) break;
        freshStreams.delete(stream);
      }
    } catch (error) {
      for (const waiting of wanted) waiting.reject(error);
    }
  }

  function schedule(): void {
    if (scheduled || flushing) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flushing = commitGroup().finally(() => {
        flushing = undefined;
        if (waiting.length > 0) schedule();
      });
    });
  }

  /**
   * Commits the appends waiting now (up to GROUP_MOST_APPENDS) as one group. An append whose failure
   * aborted the transaction (a unique constraint: another writer got there first) is answered alone,
   * and the group runs again without it. Never rejects.
   */
  async function commitGroup(): Promise<void> {
    let batch = waiting.slice(0, GROUP_MOST_APPENDS);
    waiting = waiting.slice(batch.length);
    const refused: (() => void)[] = [];
    let outcome: GroupOutcome | undefined;
    while (outcome === undefined) {
      try {
        outcome = await translated(postgresSqlDialect, () => db.transaction().execute(async (trx) => {
          await sql`select pg_advisory_xact_lock(${sql.lit(APPEND_LOCK)})`.execute(trx);
          const appended = await appendAll(groupOn(trx, freshStreams), batch, clock.now());
          // Delivered when (and only if) the group commits.
          if (appended.last > 0) await sql`select pg_notify(${LOG_CHANNEL}, ${String(appended.last)})`.execute(trx);
          return appended;
        }));
      } catch (error) {
        if (error instanceof GroupAppendFailed) {
          const { write, failure } = error;
          batch = batch.filter((each) => each !== write);
          const heard = await explained(failure, write.request).catch((explaining: unknown) => postgresSqlDialect.translateError(explaining));
          refused.push(() => write.reject(heard));
          continue;
        }
        for (const write of batch) write.reject(error);
        for (const answer of refused) answer();
        return;
      }
    }
    if (outcome.last > 0) committed?.(outcome.last);
    for (const answer of [...refused, ...outcome.answers]) answer();
  }

  /** A unique constraint refused the append: another writer appended between its read and its writes. */
  async function explained(failure: unknown, { streamId, expected }: AppendRequest): Promise<unknown> {
    if (!postgresSqlDialect.isUniqueViolation(failure, 'events_stream_version_unique') && !postgresSqlDialect.isUniqueViolation(failure, 'pets_pkey')) {
      return postgresSqlDialect.translateError(failure);
    }
    const { rows } = await db.executeQuery<{ version: number | null }>(CompiledQuery.raw(STREAM_VERSION, [streamId]));
    return new StreamVersionConflict(streamId, expected, rows[0]?.version ?? 0);
  }

  return {
    append(streamId, expected, events, metadata, options = {}) {
      return new Promise<AppendResult>((resolve, reject) => {
        waiting.push({ request: { streamId, expected, events, metadata, options }, resolve, reject, observed: undefined });
        schedule();
      });
    },
    petIds: {
      next() {
        return new Promise<number>((resolve, reject) => {
          idsWanted.push({ resolve, reject });
          if (idsWanted.length === 1) setImmediate(drawIds);
        });
      },
    },
    async drain() {
      while (scheduled || flushing || waiting.length > 0) {
        if (flushing) await flushing;
        else if (scheduled) await new Promise((resolve) => setImmediate(resolve));
        else schedule();
      }
    },
  };
}

/**
 * A group on its transaction, without savepoints: each would cost a round trip, and (past 64) slow every
 * session's snapshots. An append refused by a rule of the plan wrote nothing (but perhaps deleted an
 * expired idempotency record); one refused by the database aborts the transaction.
 */
function groupOn(trx: Transaction<PetStoreDatabase>, freshStreams: Set<string>): GroupTransaction {
  return {
    rows: appendRows(trx, freshStreams),
    // The plan's own refusals, decided before it writes anything.
    leftUsable: (error) => error instanceof StreamVersionConflict || error instanceof IdempotencyKeyTaken,
    failsGroup: isUnavailability,
  };
}

// Precompiled: run for every append, where building the query costs more than its round trip.
const STREAM_VERSION = prepared('select max(stream_version) as version from events where stream_id = $1');
const PET_ROW = prepared('select id, name, category_id, status, version, created_at, updated_at from pets where id = $1');

/** The statement that writes an append's row of `pets` along with its events (see `insertEvents`). */
function petWrite(row: PetRow, isNew: boolean) {
  return isNew
    ? sql`insert into pets (id, name, category_id, status, version, created_at, updated_at)
        values (${row.id}, ${row.name}, ${row.category_id}, ${row.status}, ${row.version}, ${row.created_at}, ${row.updated_at})`
    : sql`update pets set name = ${row.name}, category_id = ${row.category_id}, status = ${row.status}, version = ${row.version}, updated_at = ${row.updated_at}
        where id = ${row.id}`;
}

function appendRows(trx: Transaction<PetStoreDatabase>, freshStreams: Set<string>): AppendRows {
  /**
   * The append's row of `pets`, written in the statement that inserts its events: one round trip for
   * both, and an append refused by a rule of the plan has written nothing (see `leftUsable`).
   */
  let petToWrite: ReturnType<typeof petWrite> | undefined;
  return {
    async streamVersion(streamId) {
      if (freshStreams.delete(streamId)) return 0;
      const { rows } = await trx.executeQuery<{ version: number | null }>(CompiledQuery.raw(STREAM_VERSION, [streamId]));
      return rows[0]?.version ?? 0;
    },
    petRow: async (id) => (await trx.executeQuery<PetRow>(CompiledQuery.raw(PET_ROW, [id]))).rows[0],
    async remember(record, now) {
      await trx.deleteFrom('idempotency_keys')
        .where('scope', '=', record.scope).where('idempotency_key', '=', record.key).where('expires_at', '<=', now)
        .execute();
      const inserted = await trx.insertInto('idempotency_keys')
        .values({ scope: record.scope, idempotency_key: record.key, fingerprint: record.fingerprint, pet: JSON.stringify(record.pet), expires_at: record.expiresAt })
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      return inserted.numInsertedOrUpdatedRows !== 0n;
    },
    writePet(row, isNew) {
      petToWrite = petWrite(row, isNew);
    },
    async insertEvents(rows) {
      // The group holds the append lock: positions drawn now commit in their order.
      const pet = petToWrite;
      petToWrite = undefined;
      const values = sql.join(rows.map((row) =>
        sql`(${row.stream_id}, ${row.stream_version}::integer, ${row.type}, ${row.data}, ${row.metadata}, ${row.recorded_at})`));
      const statement = sql<{ position: number }>`
        with ${pet === undefined ? sql`` : sql`pet as (${pet}), `}inserted as (
          insert into events (stream_id, stream_version, type, data, metadata, recorded_at)
          select * from (values ${values}) as appended (stream_id, stream_version, type, data, metadata, recorded_at)
          returning position
        )
        select max(position) as position from inserted`.compile(trx);
      // One text for each shape (a new pet or a change, so many events): prepared.
      const { rows: inserted } = await trx.executeQuery<{ position: number }>(CompiledQuery.raw(prepared(statement.sql), [...statement.parameters]));
      return Number(inserted[0]!.position);
    },
  };
}
