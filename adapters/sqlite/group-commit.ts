import type { Kysely, SqliteDatabase, SqliteStatement } from 'kysely';
import type { PetEvent } from '../../domain/index.ts';
import { IdempotencyKeyTaken, metadataFor, projectPet, StreamVersionConflict } from '../../application/index.ts';
import type {
  AppendMetadata, AppendOptions, AppendResult, Clock, ExpectedVersion, IdempotencyRecord, PetChange,
} from '../../application/index.ts';
import type { CatalogWatch } from './catalog-watch.ts';
import type { PetStoreDatabase } from '../sql/schema.ts';
import { petFromRow } from '../sql/sql-pet-store.ts';
import { sqliteFlavour } from './sqlite-flavour.ts';

/** The store's writes: new pet ids and appends, committed in groups. */
export interface GroupCommit {
  /** A new pet id, never handed out before; resolves once the sequence is committed. */
  nextId(): Promise<number>;
  /** Appends and projects in its own savepoint; resolves once the group's transaction is on disk. */
  append(streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: AppendMetadata, options?: AppendOptions): Promise<AppendResult>;
  /** Resolves when every write asked for so far has committed or failed. */
  drain(): Promise<void>;
}

interface Waiter<T> {
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

interface PendingAppend extends Waiter<AppendResult> {
  readonly streamId: string;
  readonly expected: ExpectedVersion;
  readonly events: readonly PetEvent[];
  readonly metadata: AppendMetadata;
  readonly options: AppendOptions;
}

interface ExistingPet {
  id: number;
  name: string;
  category_id: number;
  status: string | null;
  version: number;
}

/**
 * Group commit. Every write asked for during one turn of the event loop waits for the turn's end
 * (`setImmediate`); then one `BEGIN IMMEDIATE` transaction takes all the pet ids asked for in one
 * sequence update and runs each append in its own savepoint, so a failed append (a version conflict, a
 * taken idempotency key, a constraint) is rolled back and rejected alone. One commit, one fsync
 * (synchronous=FULL), and only then is anyone answered.
 *
 * The transaction runs synchronously on prepared statements while holding Kysely's connection, so no
 * Kysely query or transaction can interleave with it.
 */
export function createGroupCommit(db: Kysely<PetStoreDatabase>, database: SqliteDatabase, watch: CatalogWatch, clock: Clock): GroupCommit {
  // Prepared on first use: a store opened without migrating (petstore migrate) may not have the tables yet.
  const prepare = (sql: string): SqliteStatement => {
    let statement: SqliteStatement | undefined;
    const prepared = () => (statement ??= database.prepare(sql));
    return {
      get reader() {
        return prepared().reader;
      },
      all: (parameters) => prepared().all(parameters),
      run: (parameters) => prepared().run(parameters),
      iterate: (parameters) => prepared().iterate(parameters),
    };
  };
  const begin = prepare('begin immediate');
  const commit = prepare('commit');
  const rollback = prepare('rollback');
  const savepoint = prepare('savepoint append');
  const release = prepare('release append');
  const rollbackTo = prepare('rollback to append');
  const takeIds = prepare("update sequences set value = value + ? where name = 'pet_id' returning value");
  const streamVersion = prepare('select max(stream_version) as version from events where stream_id = ?');
  const forgetExpired = prepare('delete from idempotency_keys where scope = ? and idempotency_key = ? and expires_at <= ?');
  const remember = prepare('insert into idempotency_keys (scope, idempotency_key, fingerprint, pet, expires_at) values (?, ?, ?, ?, ?) on conflict do nothing');
  const insertEvent = prepare('insert into events (stream_id, stream_version, type, data, metadata, recorded_at) values (?, ?, ?, ?, ?, ?)');
  // A new stream's first event, written only if the stream has none: the check and the write in one statement.
  const insertFirstEvent = prepare(`insert into events (stream_id, stream_version, type, data, metadata, recorded_at)
    select ?, 1, ?, ?, ?, ? where not exists (select 1 from events where stream_id = ?)`);
  const selectPet = prepare('select id, name, category_id, status, version from pets where id = ?');
  const insertPet = prepare('insert into pets (id, name, category_id, status, version, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)');
  const updatePet = prepare('update pets set name = ?, category_id = ?, status = ?, version = ?, updated_at = ? where id = ?');

  let idWaiters: Waiter<number>[] = [];
  let appends: PendingAppend[] = [];
  let scheduled = false;
  const flushing = new Set<Promise<void>>();

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const flushed = flush(idWaiters, appends);
      idWaiters = [];
      appends = [];
      flushing.add(flushed);
      void flushed.then(() => flushing.delete(flushed));
    });
  }

  /** Never rejects: a group that fails as a whole rejects each of its waiters. */
  async function flush(ids: Waiter<number>[], batch: PendingAppend[]): Promise<void> {
    try {
      await db.connection().execute(async () => commitGroup(ids, batch));
    } catch (error) {
      const failure = sqliteFlavour.translateError(error);
      for (const waiter of [...ids, ...batch]) waiter.reject(failure);
    }
  }

  /** Runs the whole group synchronously; settles the waiters only after the commit. Throws when the group failed as a whole. */
  function commitGroup(ids: Waiter<number>[], batch: PendingAppend[]): void {
    const outcomes: ({ ok: true; result: AppendResult } | { ok: false; error: unknown })[] = [];
    const changes: PetChange[] = [];
    let firstId = 0;
    watch.around(() => {
      begin.run([]);
      try {
        if (ids.length > 0) firstId = (takeIds.all([ids.length])[0] as { value: number }).value - ids.length + 1;
        for (const pending of batch) {
          savepoint.run([]);
          try {
            const { result, change } = appendOne(pending);
            release.run([]);
            outcomes.push({ ok: true, result });
            if (change) changes.push(change);
          } catch (error) {
            rollbackTo.run([]);
            release.run([]);
            outcomes.push({ ok: false, error });
          }
        }
        commit.run([]);
      } catch (error) {
        try {
          rollback.run([]);
        } catch {
          // SQLite may have rolled back already (e.g. after an I/O error).
        }
        throw error;
      }
    }, () => changes);
    ids.forEach((waiter, index) => waiter.resolve(firstId + index));
    batch.forEach((pending, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) pending.resolve(outcome.result);
      else pending.reject(outcome.error);
    });
  }

  function appendOne({ streamId, expected, events, metadata, options }: PendingAppend): { result: AppendResult; change: PetChange | undefined } {
    const fresh = expected === 'no_stream';
    const actual = fresh ? 0 : (streamVersion.all([streamId])[0] as { version: number | null }).version ?? 0;
    if (!fresh && expected !== actual) throw new StreamVersionConflict(streamId, expected, actual);
    if (options.remember) rememberCreation(options.remember);
    let version = actual;
    for (const event of events) {
      version += 1;
      const data = JSON.stringify(event.data);
      const eventMetadata = JSON.stringify(metadataFor(event, metadata));
      if (version > 1) {
        insertEvent.run([streamId, version, event.type, data, eventMetadata, metadata.recordedAt]);
      } else if (Number(insertFirstEvent.run([streamId, event.type, data, eventMetadata, metadata.recordedAt, streamId]).changes) === 0) {
        const found = (streamVersion.all([streamId])[0] as { version: number | null }).version ?? 0;
        throw new StreamVersionConflict(streamId, expected, found);
      }
    }
    return { result: { version }, change: projectIntoPets(events, version, metadata.recordedAt, fresh) };
  }

  /** Stored in the append's savepoint, so a crash cannot keep one without the other. */
  function rememberCreation(record: IdempotencyRecord): void {
    forgetExpired.run([record.scope, record.key, clock.now().toISOString()]);
    const inserted = remember.run([record.scope, record.key, record.fingerprint, JSON.stringify(record.pet), record.expiresAt]);
    if (Number(inserted.changes) === 0) throw new IdempotencyKeyTaken(record.scope, record.key);
  }

  /**
   * The inline projection, in the append's savepoint: a reader never sees one without the other.
   * A new stream has no row yet (`fresh`), so there is none to read.
   */
  function projectIntoPets(events: readonly PetEvent[], version: number, at: string, fresh: boolean): PetChange | undefined {
    const petId = events[0]?.data.id;
    if (petId === undefined) return undefined;
    const existing = fresh ? undefined : (selectPet.all([petId])[0] as ExistingPet | undefined);
    const { pet } = projectPet(existing && { pet: petFromRow(existing), version: existing.version }, events, version);
    const status = pet.status ?? null;
    if (existing) updatePet.run([pet.name, pet.categoryId, status, version, at, petId]);
    else insertPet.run([petId, pet.name, pet.categoryId, status, version, at, at]);
    return { id: petId, statuses: existing ? [existing.status as PetChange['statuses'][number], status] : [status] };
  }

  return {
    nextId() {
      return new Promise<number>((resolve, reject) => {
        idWaiters.push({ resolve, reject });
        schedule();
      });
    },
    append(streamId, expected, events, metadata, options = {}) {
      return new Promise<AppendResult>((resolve, reject) => {
        appends.push({ streamId, expected, events, metadata, options, resolve, reject });
        schedule();
      });
    },
    async drain() {
      while (scheduled || flushing.size > 0) {
        if (flushing.size > 0) await Promise.all(flushing);
        else await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
