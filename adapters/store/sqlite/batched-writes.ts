import type { Kysely, SqliteDatabase } from 'kysely';
import { StoreUnavailable } from '../../../application/index.ts';
import type { AppendResult, Clock, EventStore, PetIds } from '../../../application/index.ts';
import { executeAppend } from '../append-plan.ts';
import type { AppendRequest, AppendRows, Appended } from '../append-plan.ts';
import type { PetChange } from '../catalog-changes.ts';
import type { PetRow } from '../pet-rows.ts';
import type { PetStoreDatabase } from '../schema.ts';
import type { CatalogWatch } from './commit-watch.ts';
import { BUSY_TIMEOUT_MS } from './open-sqlite.ts';
import { sqliteFault, sqliteSqlDialect } from './sqlite-sql-dialect.ts';
import type { CommittedGroup, WriteObserver } from '../write-observer.ts';

/** SQLite's writes: appends committed in groups, and new pet ids drawn in the group that appends them. */
export interface BatchedWrites {
  readonly append: EventStore['append'];
  readonly petIds: PetIds;
  /**
   * Whether writes can commit now: the fault that stops them, or undefined. Known from the last group
   * that committed or failed; proven by writing one row (in a group of its own or with others) at most
   * once a second while faulty and once every ten seconds otherwise, so probes do not write constantly.
   * While faulty, only a group of appends committing, or a check three seconds after the last failure,
   * clears the fault.
   */
  checkWrites(): Promise<StoreUnavailable | undefined>;
  /** Resolves when every write asked for so far has committed or failed. */
  drain(): Promise<void>;
}

export interface BatchedWritesOptions {
  readonly observeWrite?: WriteObserver | undefined;
  /** Opens the file again: how a connection that found it read-only (or could not open it) can write once it is writable. */
  readonly reopen?: () => Promise<void>;
  /** How long a group waits in all for the write lock another connection holds before its writes fail as busy. */
  readonly lockWaitMs?: number;
}

/** Pauses between attempts at the write lock: short at first, then at most this. */
const LOCK_RETRY_MAX_PAUSE_MS = 50;
const WRITE_CHECK_EVERY_MS = { healthy: 10_000, faulty: 1_000 };
/** How long after the last failed group a successful write check may call the store writable. */
const FAULT_QUIET_MS = 3_000;
/** At most this often is the file opened again while writes find it unwritable. */
const REOPEN_AT_MOST_EVERY_MS = 1_000;

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
  db: Kysely<PetStoreDatabase>, database: SqliteDatabase, watch: CatalogWatch, clock: Clock, options: BatchedWritesOptions = {},
): BatchedWrites {
  const { observeWrite, reopen } = options;
  const lockWaitMs = options.lockWaitMs ?? BUSY_TIMEOUT_MS;
  // Prepared at each use through the connection's statement cache: a store opened without migrating
  // (petstore migrate) may not have the tables yet, and a reopened connection has statements of its own.
  const prepare = (text: string) => () => database.prepare(text);
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
  const touchHealth = prepare('insert into store_health (id, checked_at) values (1, ?) on conflict (id) do update set checked_at = excluded.checked_at');

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
  let checks: PendingId[] = [];
  let scheduled = false;
  /** A group is waiting for the write lock: it takes what is asked for meanwhile. */
  let waitingForLock = false;
  const flushing = new Set<Promise<void>>();
  /** The fault the last group failed with, until a group commits. */
  let fault: StoreUnavailable | undefined;
  let reopenWanted = false;
  let lastReopen = 0;
  let lastFailure = -Infinity;
  let lastCheck: { at: number; outcome: Promise<StoreUnavailable | undefined> } | undefined;

  function schedule(): void {
    if (scheduled || waitingForLock) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const flushed = flush();
      flushing.add(flushed);
      void flushed.then(() => flushing.delete(flushed));
    });
  }

  /**
   * Commits what is asked for, as one group. SQLite waits for a lock by sleeping on the calling
   * thread; here the connection is let go and the attempt repeated after a pause instead, so reads
   * and probes go on meanwhile, until `lockWaitMs` have passed. Never rejects.
   */
  async function flush(): Promise<void> {
    const began = performance.now();
    let pause = 1;
    try {
      while ((await commitGroup()) === 'busy') {
        if (performance.now() - began >= lockWaitMs) {
          rejectEverythingAsked(sqliteSqlDialect.translateError(Object.assign(new Error('the write lock stayed taken'), { code: 'SQLITE_BUSY_TIMEOUT' })));
          return;
        }
        waitingForLock = true;
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(pause * 2, LOCK_RETRY_MAX_PAUSE_MS);
      }
    } finally {
      waitingForLock = false;
      // What was asked for while this group waited and did not join it.
      if (appends.length > 0 || ids.length > 0 || checks.length > 0) schedule();
    }
  }

  function rejectEverythingAsked(failure: unknown): void {
    const everything = [...ids, ...appends, ...checks];
    ids = [];
    appends = [];
    checks = [];
    noteFailure(failure);
    for (const waiting of everything) waiting.reject(failure);
  }

  function noteFailure(failure: unknown): void {
    if (!(failure instanceof StoreUnavailable)) return;
    fault = failure;
    lastFailure = performance.now();
    if (sqliteFault(failure) === 'unwritable') reopenWanted = true;
  }

  /** One attempt: 'busy' when another connection holds the write lock (nothing was taken). */
  async function commitGroup(): Promise<'busy' | 'done'> {
    let answers: (() => void)[] = [];
    let taken: PendingAppend[] = [];
    let waitingIds: PendingId[] = [];
    let waitingChecks: PendingId[] = [];
    let committed: CommittedGroup | undefined;
    try {
      const outcome = await db.connection().execute(async () => {
        if (appends.length === 0 && ids.length === 0 && checks.length === 0) return 'done';
        if (reopenWanted && reopen && Date.now() - lastReopen >= REOPEN_AT_MOST_EVERY_MS) {
          lastReopen = Date.now();
          reopenWanted = false;
          await reopen();
        }
        try {
          begin().run([]);
        } catch (error) {
          if (sqliteFault(error) === 'busy') return 'busy';
          throw error;
        }
        waitingIds = ids;
        ids = [];
        waitingChecks = checks;
        checks = [];
        answers = await watch.around(async () => {
          try {
            await handOutIds(waitingIds);
            taken = appends;
            appends = [];
            const began = performance.now();
            const group = await appendAll(taken);
            if (waitingChecks.length > 0) touchHealth().run([clock.now().toISOString()]);
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
        return 'done';
      });
      if (outcome === 'busy') return 'busy';
    } catch (error) {
      const failure = sqliteSqlDialect.translateError(error);
      noteFailure(failure);
      // Ids already handed out stay with their callers (whose appends were in `taken`); rejecting them is a no-op.
      for (const waiting of [...waitingIds, ...taken, ...waitingChecks]) waiting.reject(failure);
      return 'done';
    }
    if (taken.length > 0 || waitingIds.length > 0) fault = undefined;
    if (committed) for (const write of taken) write.observed?.(committed);
    for (const answer of answers) answer();
    // A check proves a small write commits; it clears the fault unless a group of appends failed since it was asked.
    for (const check of waitingChecks) check.resolve(0);
    return 'done';
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
        // A fault of the machine fails the whole group; so does one that leaves no savepoint to roll back to.
        if (sqliteFault(error) !== undefined) throw error;
        try {
          rollbackTo().run([]);
          release().run([]);
        } catch {
          throw error;
        }
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
    checkWrites() {
      const every = fault ? WRITE_CHECK_EVERY_MS.faulty : WRITE_CHECK_EVERY_MS.healthy;
      if (lastCheck && Date.now() - lastCheck.at < every) return lastCheck.outcome.then(() => fault);
      const outcome = new Promise<number>((resolve, reject) => {
        checks.push({ resolve, reject });
        schedule();
      }).then(() => {
        // A small write may fit where the others do not (a page free in a full file): only a check
        // after a quiet spell, or a group of appends, says the fault is over.
        if (performance.now() - lastFailure >= FAULT_QUIET_MS) fault = undefined;
        return fault;
      }, () => fault);
      lastCheck = { at: Date.now(), outcome };
      return outcome;
    },
    async drain() {
      while (scheduled || flushing.size > 0 || appends.length > 0 || ids.length > 0 || checks.length > 0) {
        if (flushing.size > 0) await Promise.all(flushing);
        else if (scheduled) await new Promise((resolve) => setImmediate(resolve));
        else schedule();
      }
    },
  };
}
