import { Kysely } from 'kysely';
import { StoreUnavailable } from '../../../application/index.ts';
import type { Clock, EventStore, PetIds } from '../../../application/index.ts';
import type { PendingAppend } from '../append-group.ts';
import { createGroupCommitter } from '../group-committer.ts';
import type { GroupWaiting } from '../group-committer.ts';
import type { PetStoreDatabase } from '../schema.ts';
import type { SqliteCatalogChanges } from './sqlite-catalog-changes.ts';
import type { GroupCommitted, GroupToCommit, GroupWriterChannel } from './group-writer-channel.ts';
import { sqliteFault, sqliteSqlDialect } from './sqlite-sql-dialect.ts';
import { WriterThreadDialect } from './writer-thread-dialect.ts';
import type { WriteObserver } from '../write-observer.ts';

/** SQLite's writes: appends committed in groups, and new pet ids drawn in the group that appends them. */
export interface SqliteWrites {
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
  /**
   * A write beside the groups that changes neither the log nor the catalogue (webhook delivery state):
   * `work`'s statements run on the group writer, between two groups, in one transaction of their own,
   * reported to the watch as the store's own commit that changed no pet. Untranslated errors, as Kysely's.
   */
  writeOutsideLog<T>(work: (db: Kysely<PetStoreDatabase>) => Promise<T>): Promise<T>;
  /** Gives the writer's connection a setting that holds per connection (`max_page_count = …`), between groups. */
  writerPragma(pragma: string): Promise<void>;
  /** Resolves when every write asked for so far has committed or failed. */
  drain(): Promise<void>;
}

export interface SqliteWritesOptions {
  readonly observeWrite?: WriteObserver | undefined;
}

/** A write check waiting for its group: resolved once the group committed. */
interface WaitingCheck {
  readonly resolve: (value: number) => void;
  readonly reject: (error: unknown) => void;
}

const lockStayedTaken = () => Object.assign(new Error('the write lock stayed taken'), { code: 'SQLITE_BUSY_TIMEOUT' });

const WRITE_CHECK_EVERY_MS = { healthy: 10_000, faulty: 1_000 };
/** How long after the last failed group a successful write check may call the store writable. */
const FAULT_QUIET_MS = 3_000;
/** At most this often is the file opened again while writes find it unwritable. */
const REOPEN_AT_MOST_EVERY_MS = 1_000;

/**
 * SQLite's side of group commit (the queue and its schedule are `createGroupCommitter`'s): the writes
 * asked for during one turn of the event loop share one `BEGIN IMMEDIATE` transaction and one fsync (each append's plan runs against the group's rows, so a refused one is
 * rejected alone, having written nothing), and nobody is answered before the commit. The transaction runs on the group
 * writer (`GroupWriterChannel`: a thread with its own connection): SQLite's waits for the write lock and for the
 * commit's fsync sleep there while the event loop serves reads; a group that waited the writer's
 * busy timeout for the lock fails as busy, with everything asked meanwhile.
 *
 * A new pet's id is drawn in the transaction of the group that appends it: the group reads the
 * sequence once under the write lock, hands the ids out, and waits one turn of the event loop for
 * their appends (the use case decides and appends as soon as it has its id) before it commits.
 * Processes sharing the file never hand out one id twice, and a creation costs one commit.
 */
export function createSqliteWrites(channel: GroupWriterChannel, watch: SqliteCatalogChanges, clock: Clock, options: SqliteWritesOptions = {}): SqliteWrites {
  const { observeWrite } = options;
  /** Write checks waiting for the next group (see `checkWrites`). */
  let checks: WaitingCheck[] = [];
  /** The fault the last group failed with, until a group commits. */
  let fault: StoreUnavailable | undefined;
  let reopenWanted = false;
  let lastReopen = 0;
  let lastFailure = -Infinity;
  let lastCheck: { at: number; outcome: Promise<StoreUnavailable | undefined> } | undefined;

  const aside = new Kysely<PetStoreDatabase>({ dialect: new WriterThreadDialect(channel) });

  function noteFailure(failure: unknown): void {
    if (!(failure instanceof StoreUnavailable)) return;
    fault = failure;
    lastFailure = performance.now();
    if (sqliteFault(failure) === 'unwritable') reopenWanted = true;
  }

  /** One group, from taking the write lock to answering its writes. Never rejects. */
  async function runGroup(waiting: GroupWaiting): Promise<void> {
    const waitingIds = waiting.takeIds();
    const waitingChecks = checks;
    checks = [];
    let taken: PendingAppend[] = [];
    const reopen = reopenWanted && Date.now() - lastReopen >= REOPEN_AT_MOST_EVERY_MS;
    if (reopen) {
      lastReopen = Date.now();
      reopenWanted = false;
    }
    const toCommit = (): GroupToCommit => {
      taken = waiting.takeAppends();
      return { appends: taken.map((write) => write.request), writeHealthRow: waitingChecks.length > 0, now: clock.now().toISOString() };
    };
    let reply: GroupCommitted | 'busy';
    try {
      if (waitingIds.length === 0) {
        reply = await channel.beginAndCommit(toCommit(), reopen);
      } else {
        const begun = await channel.begin(waitingIds.length, reopen);
        if (begun === 'busy') {
          reply = begun;
        } else {
          waitingIds.forEach((id, index) => id.resolve(begun.first + index));
          // Their appends join this group: the use case appends as soon as it has its id.
          await new Promise((resolve) => setImmediate(resolve));
          reply = await channel.commit(toCommit());
        }
      }
    } catch (error) {
      const failure = sqliteSqlDialect.translateError(error);
      noteFailure(failure);
      // Ids already handed out stay with their callers (whose appends were in `taken`); rejecting them is a no-op.
      for (const waiting of [...waitingIds, ...taken, ...waitingChecks]) waiting.reject(failure);
      return;
    }
    if (reply === 'busy') {
      // The writer waited its busy timeout: what was asked meanwhile would wait as long again.
      const failure = sqliteSqlDialect.translateError(lockStayedTaken());
      const everything = [...waitingIds, ...taken, ...waitingChecks, ...waiting.takeIds(), ...waiting.takeAppends(), ...checks];
      checks = [];
      noteFailure(failure);
      for (const waiting of everything) waiting.reject(failure);
      return;
    }
    if (taken.length > 0 || waitingIds.length > 0) fault = undefined;
    watch.committed(reply, reply.changes);
    if (observeWrite) {
      const group = { size: taken.length, began: reply.began - performance.timeOrigin, committed: reply.committed - performance.timeOrigin };
      for (const write of taken) write.observed?.(group);
    }
    const { outcomes } = reply;
    taken.forEach((write, index) => {
      const outcome = outcomes[index]!;
      if ('result' in outcome) write.resolve(outcome.result);
      else write.reject(sqliteSqlDialect.translateError(outcome.error));
    });
    // A check proves a small write commits; it clears the fault unless a group of appends failed since it was asked.
    for (const check of waitingChecks) check.resolve(0);
  }

  const committer = createGroupCommitter({ commitGroup: runGroup, alsoWaiting: () => checks.length > 0, observeWrite });

  return {
    append: committer.append,
    petIds: committer.petIds,
    checkWrites() {
      const every = fault ? WRITE_CHECK_EVERY_MS.faulty : WRITE_CHECK_EVERY_MS.healthy;
      if (lastCheck && Date.now() - lastCheck.at < every) return lastCheck.outcome.then(() => fault);
      const outcome = new Promise<number>((resolve, reject) => {
        checks.push({ resolve, reject });
        committer.schedule();
      }).then(() => {
        // A small write may fit where the others do not (a page free in a full file): only a check
        // after a quiet spell, or a group of appends, says the fault is over.
        if (performance.now() - lastFailure >= FAULT_QUIET_MS) fault = undefined;
        return fault;
      }, () => fault);
      lastCheck = { at: Date.now(), outcome };
      return outcome;
    },
    writeOutsideLog: (work) => committer.alone(async () => {
      if ((await channel.begin(0)) === 'busy') throw lockStayedTaken();
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(aside);
      } catch (error) {
        await channel.rollback();
        throw error;
      }
      watch.committed(await channel.commit({ appends: [], writeHealthRow: false, now: clock.now().toISOString() }), []);
      return result;
    }),
    writerPragma: (pragma) => committer.alone(async () => {
      await channel.pragma(pragma).catch((error: unknown) => {
        throw sqliteSqlDialect.translateError(error);
      });
    }),
    drain: committer.drain,
  };
}
