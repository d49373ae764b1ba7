import type { Kysely, SqliteDatabase, SqliteStatement } from 'kysely';
import type { AppendResult, Clock, EventStore, PetIds } from '../../../application/index.ts';
import { executeAppend } from '../append-plan.ts';
import type { AppendRequest, AppendRows, Appended } from '../append-plan.ts';
import type { PetChange } from '../catalog-changes.ts';
import type { PetRow } from '../pet-rows.ts';
import type { PetStoreDatabase } from '../schema.ts';
import type { CatalogWatch } from './commit-watch.ts';
import { sqliteSqlDialect } from './sqlite-sql-dialect.ts';
import type { CommittedGroup, WriteObserver } from '../write-observer.ts';

/** SQLite's writes: appends committed in groups, and new pet ids drawn in the group that appends them. */
export interface BatchedWrites {
  readonly append: EventStore['append'];
  readonly petIds: PetIds;
  /** Resolves when every write asked for so far has committed or failed. */
  drain(): Promise<void>;
}

interface PendingAppend {
  readonly request: AppendRequest;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
  readonly observed: ((group: CommittedGroup) => void) | undefined;
}

interface PendingId {
  readonly resolve: (id: number) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: the writes asked for during one turn of the event loop share one `BEGIN IMMEDIATE`
 * transaction and one fsync, each append in its own savepoint (a failed one is rolled back and
 * rejected alone), and nobody is answered before the commit.
 *
 * A new pet's id is drawn in the transaction of the group that appends it: the group reads the
 * sequence once under the write lock, hands the ids out, and waits one turn of the event loop for
 * their appends (the use case decides and appends as soon as it has its id) before it commits.
 * Processes sharing the file never hand out one id twice, and a creation costs one commit.
 */
export function createBatchedWrites(
  db: Kysely<PetStoreDatabase>, database: SqliteDatabase, watch: CatalogWatch, clock: Clock, observeWrite?: WriteObserver,
): BatchedWrites {
  // Prepared on first use: a store opened without migrating (petstore migrate) may not have the tables yet.
  const prepare = (text: string) => {
    let statement: SqliteStatement | undefined;
    return () => (statement ??= database.prepare(text));
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
  const selectPet = prepare('select id, name, category_id, status, version, created_at, updated_at from pets where id = ?');
  const insertPet = prepare('insert into pets (id, name, category_id, status, version, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)');
  const updatePet = prepare('update pets set name = ?, category_id = ?, status = ?, version = ?, updated_at = ? where id = ?');

  /** The rows of the append plan, as prepared statements on the group's connection. */
  const rows: AppendRows = {
    streamVersion: (streamId) => (streamVersion().all([streamId])[0] as { version: number | null }).version ?? 0,
    petRow: (id) => selectPet().all([id])[0] as PetRow | undefined,
    remember(record, now) {
      forgetExpired().run([record.scope, record.key, now]);
      return Number(remember().run([record.scope, record.key, record.fingerprint, JSON.stringify(record.pet), record.expiresAt]).changes) > 0;
    },
    writePet(row, isNew) {
      if (isNew) insertPet().run([row.id, row.name, row.category_id, row.status, row.version, row.created_at, row.updated_at]);
      else updatePet().run([row.name, row.category_id, row.status, row.version, row.updated_at, row.id]);
    },
    insertEvents(events) {
      let position = 0;
      for (const event of events) {
        position = Number(insertEvent().run([event.stream_id, event.stream_version, event.type, event.data, event.metadata, event.recorded_at]).lastInsertRowid);
      }
      return position;
    },
  };

  let appends: PendingAppend[] = [];
  let ids: PendingId[] = [];
  let scheduled = false;
  const flushing = new Set<Promise<void>>();

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const flushed = flush();
      flushing.add(flushed);
      void flushed.then(() => flushing.delete(flushed));
    });
  }

  /** Never rejects: a group that fails as a whole rejects each of its writes. */
  async function flush(): Promise<void> {
    let answers: (() => void)[] = [];
    let taken: PendingAppend[] = [];
    let waitingIds: PendingId[] = [];
    let committed: CommittedGroup | undefined;
    try {
      await db.connection().execute(async () => {
        if (appends.length === 0 && ids.length === 0) return;
        waitingIds = ids;
        ids = [];
        answers = await watch.around(async () => {
          begin().run([]);
          try {
            await handOutIds(waitingIds);
            taken = appends;
            appends = [];
            const began = performance.now();
            const group = await appendAll(taken);
            commit().run([]);
            if (observeWrite) committed = { size: taken.length, began, committed: performance.now() };
            return group;
          } catch (error) {
            try {
              rollback().run([]);
            } catch {
              // SQLite may have rolled back already (e.g. after an I/O error).
            }
            throw error;
          }
        }, (group) => group.changes).then((group) => group.answers);
      });
    } catch (error) {
      const failure = sqliteSqlDialect.translateError(error);
      // Ids already handed out stay with their callers (whose appends were in `taken`); rejecting them is a no-op.
      for (const waiting of [...waitingIds, ...taken]) waiting.reject(failure);
      return;
    }
    if (committed) for (const write of taken) write.observed?.(committed);
    for (const answer of answers) answer();
  }

  /** Draws the waiting ids under the write lock, then gives their appends one turn to join this group. */
  async function handOutIds(waiting: readonly PendingId[]): Promise<void> {
    if (waiting.length === 0) return;
    let last = (readLastId().all([])[0] as { value: number }).value;
    const first = last + 1;
    last += waiting.length;
    // Outside any savepoint: an id whose append fails stays taken, so it is never handed out again.
    writeLastId().run([last]);
    waiting.forEach((id, index) => id.resolve(first + index));
    await new Promise((resolve) => setImmediate(resolve));
  }

  async function appendAll(batch: readonly PendingAppend[]): Promise<{ answers: (() => void)[]; changes: PetChange[] }> {
    const answers: (() => void)[] = [];
    const changes: PetChange[] = [];
    const now = clock.now();
    for (const write of batch) {
      savepoint().run([]);
      let appended: Appended;
      try {
        appended = await executeAppend(rows, write.request, now);
      } catch (error) {
        rollbackTo().run([]);
        release().run([]);
        answers.push(() => write.reject(error));
        continue;
      }
      release().run([]);
      if (appended.change) changes.push(appended.change);
      answers.push(() => write.resolve({ version: appended.version, position: appended.position }));
    }
    return { answers, changes };
  }

  return {
    append(streamId, expected, events, metadata, options = {}) {
      return new Promise<AppendResult>((resolve, reject) => {
        appends.push({ request: { streamId, expected, events, metadata, options }, resolve, reject, observed: observeWrite?.() });
        schedule();
      });
    },
    petIds: {
      next() {
        return new Promise<number>((resolve, reject) => {
          ids.push({ resolve, reject });
          schedule();
        });
      },
    },
    async drain() {
      while (scheduled || flushing.size > 0 || appends.length > 0 || ids.length > 0) {
        if (flushing.size > 0) await Promise.all(flushing);
        else if (scheduled) await new Promise((resolve) => setImmediate(resolve));
        else schedule();
      }
    },
  };
}
