import type { Kysely, SqliteDatabase, SqliteStatement } from 'kysely';
import type { PetEvent } from '../../../domain/index.ts';
import { IdempotencyKeyTaken, metadataFor, projectPet, StreamVersionConflict } from '../../../application/index.ts';
import type {
  AppendMetadata, AppendOptions, AppendResult, Clock, ExpectedVersion, IdempotencyRecord, NewStream,
} from '../../../application/index.ts';
import type { CatalogWatch } from './commit-watch.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { petFromRow } from '../sql-pet-store.ts';
import { sqliteSqlDialect } from './sqlite-sql-dialect.ts';
import type { PetChange } from '../catalog-changes.ts';
import type { CommittedGroup, WriteObserver } from '../write-observer.ts';

/** The store's writes: appends and new streams, committed in groups. */
export interface GroupCommit {
  /** Appends and projects in its own savepoint; resolves once the group's transaction is on disk. */
  append(streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: AppendMetadata, options?: AppendOptions): Promise<AppendResult>;
  /** Takes a pet id and appends the stream `build` makes from it, both in one savepoint; resolves as `append`. */
  appendNew<T extends NewStream>(build: (id: number) => T, metadata: AppendMetadata): Promise<T>;
  /** Resolves when every write asked for so far has committed or failed. */
  drain(): Promise<void>;
}

/** A write waiting for its group. */
interface PendingWrite {
  /** Writes, inside the write's own savepoint; returns how to answer once the group has committed. */
  readonly run: () => { readonly answer: () => void; readonly change: PetChange | undefined };
  readonly reject: (error: unknown) => void;
  readonly observed: ((group: CommittedGroup) => void) | undefined;
}

/** What one append wrote. */
interface Appended<T> {
  readonly result: T;
  readonly change: PetChange | undefined;
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
 * (`setImmediate`); then one `BEGIN IMMEDIATE` transaction runs each append in its own savepoint, so a
 * failed append (a version conflict, a taken idempotency key, a constraint) is rolled back and rejected
 * alone. A new stream takes its pet id in the same transaction: the sequence is read once, under the
 * write lock (so processes sharing the file never hand out one id twice), and written back once before
 * the commit. One commit, one fsync (synchronous=FULL), and only then is anyone answered.
 *
 * The transaction runs synchronously on prepared statements while holding Kysely's connection, so no
 * Kysely query or transaction can interleave with it.
 */
export function createGroupCommit(
  db: Kysely<PetStoreDatabase>, database: SqliteDatabase, watch: CatalogWatch, clock: Clock, observeWrite?: WriteObserver,
): GroupCommit {
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
  const readLastId = prepare("select value from sequences where name = 'pet_id'");
  const writeLastId = prepare("update sequences set value = ? where name = 'pet_id'");
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

  let pending: PendingWrite[] = [];
  let scheduled = false;
  /** The last pet id the running group took; `undefined` until it takes one. */
  let lastId: number | undefined;
  const flushing = new Set<Promise<void>>();

  function enqueue<T>(write: () => Appended<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      pending.push({
        run() {
          const { result, change } = write();
          return { answer: () => resolve(result), change };
        },
        reject,
        observed: observeWrite?.(),
      });
      schedule();
    });
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const flushed = flush(pending);
      pending = [];
      flushing.add(flushed);
      void flushed.then(() => flushing.delete(flushed));
    });
  }

  /** Never rejects: a group that fails as a whole rejects each of its writes. */
  async function flush(batch: PendingWrite[]): Promise<void> {
    try {
      await db.connection().execute(async () => commitGroup(batch));
    } catch (error) {
      const failure = sqliteSqlDialect.translateError(error);
      for (const write of batch) write.reject(failure);
    }
  }

  /** Runs the whole group synchronously; answers only after the commit. Throws when the group failed as a whole. */
  function commitGroup(batch: PendingWrite[]): void {
    const answers: (() => void)[] = [];
    const changes: PetChange[] = [];
    const began = performance.now();
    watch.around(() => {
      begin.run([]);
      lastId = undefined;
      try {
        for (const write of batch) {
          savepoint.run([]);
          try {
            const { answer, change } = write.run();
            release.run([]);
            answers.push(answer);
            if (change) changes.push(change);
          } catch (error) {
            rollbackTo.run([]);
            release.run([]);
            answers.push(() => write.reject(error));
          }
        }
        // Outside the savepoints: an id whose append failed stays taken, so a stream that already holds
        // the next id (written around the store) costs one request, not every later one.
        if (lastId !== undefined) writeLastId.run([lastId]);
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
    if (observeWrite) {
      const group = { size: batch.length, began, committed: performance.now() };
      for (const write of batch) write.observed?.(group);
    }
    for (const answer of answers) answer();
  }

  /** A new stream under the next pet id. */
  function appendNewOne<T extends NewStream>(build: (id: number) => T, metadata: AppendMetadata): Appended<T> {
    lastId = (lastId ?? (readLastId.all([])[0] as { value: number }).value) + 1;
    const made = build(lastId);
    const { change } = appendOne(made.streamId, 'no_stream', made.events, metadata, made);
    return { result: made, change };
  }

  function appendOne(
    streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: AppendMetadata, options: AppendOptions,
  ): Appended<AppendResult> {
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
    append(streamId, expected, events, metadata, options = {}) {
      return enqueue(() => appendOne(streamId, expected, events, metadata, options));
    },
    appendNew(build, metadata) {
      return enqueue(() => appendNewOne(build, metadata));
    },
    async drain() {
      while (scheduled || flushing.size > 0) {
        if (flushing.size > 0) await Promise.all(flushing);
        else await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
