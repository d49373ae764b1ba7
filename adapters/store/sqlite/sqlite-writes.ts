import { Kysely } from 'kysely';
import { StoreUnavailable } from '../../../application/index.ts';
import type { Clock, EventStore, PetIds } from '../../../application/index.ts';
import type { PendingAppend } from '../group-rows.ts';
import { createGroupCommitter } from '../group-committer.ts';
import type { GroupWaiting } from '../group-committer.ts';
import type { PetStoreDatabase } from '../schema.ts';
import type { GroupCommitted, GroupWriter } from './group-writer.ts';
import { PetStoreSqliteDialect, whileBusy } from './sqlite-kysely-dialect.ts';
import { sqliteFault, sqliteSqlDialect } from './sqlite-sql-dialect.ts';
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
   * `work`'s statements run on the writer's connection, between two groups, in one transaction of their
   * own, reported to the watch as the store's own commit that changed no pet. Untranslated errors, as Kysely's.
   */
  writeOutsideLog<T>(work: (db: Kysely<PetStoreDatabase>) => Promise<T>): Promise<T>;
  /** Gives the writer's connection a setting that holds per connection (`max_page_count = …`), between groups. */
  writerPragma(pragma: string): Promise<void>;
  /** Resolves when every write asked for so far has committed or failed. */
  drain(): Promise<void>;
}

export interface SqliteWritesOptions {
  readonly observeWrite?: WriteObserver | undefined;
  /** How long a group waits for the write lock another connection holds before its writes fail as busy. */
  readonly lockWaitMs: number;
}

/** A write check waiting for its group: resolved once the group committed. */
interface WaitingCheck {
  readonly resolve: (value: number) => void;
  readonly reject: (error: unknown) => void;
}

const WRITE_CHECK_EVERY_MS = { healthy: 10_000, faulty: 1_000 };
/** How long after the last failed group a successful write check may call the store writable. */
const FAULT_QUIET_MS = 3_000;
/** At most this often is the file opened again while writes find it unwritable. */
const REOPEN_AT_MOST_EVERY_MS = 1_000;

/**
 * SQLite's side of group commit (the queue and its schedule are `createGroupCommitter`'s): the writes
 * asked for during one turn of the event loop share one `BEGIN IMMEDIATE` transaction and one fsync
 * (each append's plan runs against the group's rows, so a refused one is rejected alone, having
 * written nothing), and nobody is answered before the commit. The transaction runs on the group
 * writer's own connection, on the event loop, as the durable ceiling's does: one fsync a group. A lock
 * another connection holds is waited for on a timer, never by sleeping on the event loop, and a group
 * that waited `lockWaitMs` fails as busy, with everything asked meanwhile.
 *
 * A new pet's id is drawn in the transaction of the group that appends it: the group reads the
 * sequence once under the write lock, hands the ids out, and waits one turn of the event loop for
 * their appends (the use case decides and appends as soon as it has its id) before it commits.
 * Processes sharing the file never hand out one id twice, and a creation costs one commit.
 */
export function createSqliteWrites(writer: GroupWriter, clock: Clock, options: SqliteWritesOptions): SqliteWrites {
  const { observeWrite, lockWaitMs } = options;
  /** Write checks waiting for the next group (see `checkWrites`). */
  let checks: WaitingCheck[] = [];
  /** The fault the last group failed with, until a group commits. */
  let fault: StoreUnavailable | undefined;
  let reopenWanted = false;
  let lastReopen = 0;
  let lastFailure = -Infinity;
  let lastCheck: { at: number; outcome: Promise<StoreUnavailable | undefined> } | undefined;

  // Kysely over the writer's connection, whichever it is now (it is opened again after a fault).
  const aside = new Kysely<PetStoreDatabase>({
    dialect: new PetStoreSqliteDialect({ database: { prepare: (text) => current!.prepare(text), close() {} } }),
  });
  let current: Awaited<ReturnType<GroupWriter['connection']>> | undefined;

  /** Takes the write lock, trying again on a timer while another connection holds it, for at most `lockWaitMs`. */
  const beginWhenFree = (ids: number) => whileBusy(() => writer.begin(ids), lockWaitMs);

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
    if (reopenWanted && Date.now() - lastReopen >= REOPEN_AT_MOST_EVERY_MS) {
      lastReopen = Date.now();
      reopenWanted = false;
      writer.reopen();
    }
    let reply: GroupCommitted;
    try {
      const begun = await beginWhenFree(waitingIds.length);
      waitingIds.forEach((id, index) => id.resolve(begun.first + index));
      // Their appends join this group: the use case appends as soon as it has its id.
      if (waitingIds.length > 0) await new Promise((resolve) => setImmediate(resolve));
      taken = waiting.takeAppends();
      reply = await writer.commit({ appends: taken, writeHealthRow: waitingChecks.length > 0, now: clock.now().toISOString() });
    } catch (error) {
      const failure = sqliteSqlDialect.translateError(error);
      noteFailure(failure);
      const failed = [...waitingIds, ...taken, ...waitingChecks];
      if (sqliteFault(error) === 'busy') {
        // The lock stayed taken for the whole wait: what was asked meanwhile would wait as long again.
        failed.push(...waiting.takeIds(), ...waiting.takeAppends(), ...checks);
        checks = [];
      }
      // Ids already handed out stay with their callers (whose appends were in `taken`); rejecting them is a no-op.
      for (const waiting of failed) waiting.reject(failure);
      return;
    }
    if (taken.length > 0 || waitingIds.length > 0) fault = undefined;
    if (observeWrite) {
      const group = { size: taken.length, began: reply.began, committed: reply.committed };
      for (const write of taken) write.observed?.(group);
    }
    for (const answer of reply.answers) answer();
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
      await beginWhenFree(0);
      let result: Awaited<ReturnType<typeof work>>;
      try {
        current = await writer.connection();
        result = await work(aside);
      } catch (error) {
        writer.rollback();
        throw error;
      }
      await writer.commit({ appends: [], writeHealthRow: false, now: clock.now().toISOString() });
      return result;
    }),
    writerPragma: (pragma) => committer.alone(async () => {
      try {
        (await writer.connection()).prepare(`pragma ${pragma}`).all([]);
      } catch (error) {
        throw sqliteSqlDialect.translateError(error);
      }
    }),
    drain: committer.drain,
  };
}
