import { Kysely } from 'kysely';
import { StoreUnavailable } from '../../../application/index.ts';
import type { Clock, EventStore } from '../../../application/index.ts';
import { createCommitBatcher } from '../write/commit-batcher.ts';
import { createSharedTransactions } from '../write/shared-transactions.ts';
import type { BatchWaiting } from '../write/commit-batcher.ts';
import { creationsIn } from '../write/batch-rows.ts';
import type { PendingWrite } from '../write/batch-rows.ts';
import type { PetStoreDatabase } from '../schema.ts';
import type { WriteObserver } from '../write/write-observer.ts';
import { PetStoreSqliteDialect, whileBusy } from './sqlite-kysely-dialect.ts';
import { lockWaitedTooLong, sqliteFault, sqliteSqlDialect } from './sqlite-sql-dialect.ts';
import { NewStreamTaken } from './sqlite-batch-writer.ts';
import type { BatchCommitted, BatchWriter } from './sqlite-batch-writer.ts';

/** SQLite's writes: appends and creations committed in batches, a new pet's id drawn in the batch that appends it. */
export interface SqliteWrites {
  readonly append: EventStore['append'];
  readonly create: EventStore['create'];
  /**
   * Whether writes can commit now: the fault that stops them, or undefined. Known from the last batch
   * that committed or failed; proven by writing one row (in a batch of its own or with others) at most
   * once a second while faulty and once every ten seconds otherwise, so probes do not write constantly.
   * While faulty, only a batch of appends committing, or a check three seconds after the last failure,
   * clears the fault.
   */
  checkWrites(): Promise<StoreUnavailable | undefined>;
  /**
   * A write beside the batches that changes neither the log nor the catalogue (webhook delivery state,
   * consumer groups): `work`'s statements run on the writer's connection, between two batches, in one
   * transaction with the other writes beside the log that waited meanwhile (each in a savepoint of its
   * own), reported to the watch as the store's own commit that changed no pet. Untranslated errors, as Kysely's.
   */
  writeOutsideLog<T>(work: (db: Kysely<PetStoreDatabase>) => Promise<T>): Promise<T>;
  /** Gives the writer's connection a setting that holds per connection (`max_page_count = …`), between batches. */
  writerPragma(pragma: string): Promise<void>;
  /** Resolves when every write asked for so far has committed or failed. */
  drain(): Promise<void>;
}

export interface SqliteWritesOptions {
  readonly observeWrite?: WriteObserver | undefined;
  /**
   * How long a write waits, from its arrival, for the write lock another connection holds, whatever
   * else waits on the writer before it; then it fails as busy. A batch waits as long for the lock.
   */
  readonly lockWaitMs: number;
}

/** A write check waiting for its batch: resolved once the batch committed. */
interface WaitingCheck {
  readonly resolve: (value: number) => void;
  readonly reject: (error: unknown) => void;
}

const WRITE_CHECK_EVERY_MS = { healthy: 10_000, faulty: 1_000 };
/** How long after the last failed batch a successful write check may call the store writable. */
const FAULT_QUIET_MS = 3_000;
/**
 * Turns a batch waits, before it takes the write lock, while creations keep arriving. Under load this is
 * what fills a batch: 64 clients made batches of about 15 to 34 creations without it, 51 with two
 * (`npm run bench:quick -- --only create`).
 */
const FILL_TURNS = 2;

/** At most this often is the file opened again while writes find it unwritable. */
const REOPEN_AT_MOST_EVERY_MS = 1_000;

/**
 * SQLite's side of batch commit (the queue and its schedule are `createCommitBatcher`'s): the writes
 * asked for during one turn of the event loop share one `BEGIN IMMEDIATE` transaction and one fsync
 * (each append's plan runs against the batch's rows, so a refused one is rejected alone, having
 * written nothing), and nobody is answered before the commit. The transaction runs on the batch
 * writer's own connection, on the event loop, as the durable ceiling's does: one fsync a batch. A lock
 * another connection holds is waited for on a timer, never by sleeping on the event loop, and a batch
 * that waited `lockWaitMs` fails as busy, with everything asked meanwhile. Whatever waits before it on
 * the writer (batches, writes beside the log), a write is answered within `lockWaitMs` of its arrival.
 *
 * A new pet's id is drawn in the transaction of the batch that appends it: under the write lock the
 * batch draws one id for each creation it took (one read and one write of the sequence) and builds
 * their appends from them, synchronously, so the lock is never held while application code is awaited.
 * Processes sharing the file never hand out one id twice, a rolled-back batch gives its ids back, and a
 * creation costs one commit. Writes arriving in the turns after a batch was asked for join it, for up to
 * `FILL_TURNS` turns, before it takes the lock.
 */
export function createSqliteWrites(writer: BatchWriter, clock: Clock, options: SqliteWritesOptions): SqliteWrites {
  const { observeWrite, lockWaitMs } = options;
  /** Write checks waiting for the next batch (see `checkWrites`). */
  let checks: WaitingCheck[] = [];
  /** The fault the last batch failed with, until a batch commits. */
  let fault: StoreUnavailable | undefined;
  let reopenWanted = false;
  let lastReopen = -Infinity;
  let lastFailure = -Infinity;
  let lastCheck: { at: number; outcome: Promise<StoreUnavailable | undefined> } | undefined;

  // Kysely over the writer's connection, whichever it is now (it is opened again after a fault).
  const aside = new Kysely<PetStoreDatabase>({
    dialect: new PetStoreSqliteDialect({ database: { prepare: (text) => current!.prepare(text), close() {} } }),
  });
  let current: Awaited<ReturnType<BatchWriter['connection']>> | undefined;

  /** Takes the write lock, trying again on a timer while another connection holds it, for at most `lockWaitMs`. */
  const beginWhenFree = () => whileBusy(() => writer.begin(), lockWaitMs);

  function noteFailure(failure: unknown): void {
    if (!(failure instanceof StoreUnavailable)) return;
    fault = failure;
    lastFailure = performance.now();
    if (sqliteFault(failure) === 'unwritable') reopenWanted = true;
  }

  /** One batch, from taking the write lock to answering its writes. Never rejects. */
  async function runBatch(waiting: BatchWaiting): Promise<void> {
    const waitingChecks = checks;
    checks = [];
    let taken: PendingWrite[] = [];
    if (reopenWanted && performance.now() - lastReopen >= REOPEN_AT_MOST_EVERY_MS) {
      lastReopen = performance.now();
      reopenWanted = false;
      writer.reopen();
    }
    let reply: BatchCommitted;
    const commitTaken = async (readNewStreams: boolean) => {
      await beginWhenFree();
      if (!readNewStreams) taken = waiting.takeWrites();
      const drawn = new Map<string, { first: number; count: number }>();
      for (const [sequence, count] of creationsIn(taken)) drawn.set(sequence, { first: writer.drawIds(sequence, count), count });
      return writer.commit({ writes: taken, drawn, writeHealthRow: waitingChecks.length > 0, now: clock.now().toISOString(), readNewStreams });
    };
    try {
      // Rolled back having answered nobody: run again, the new streams read, and the plan refuses the creation whose stream was taken.
      reply = await commitTaken(false).catch((error: unknown) => (error instanceof NewStreamTaken ? commitTaken(true) : Promise.reject(error)));
    } catch (error) {
      const failure = sqliteSqlDialect.translateError(error);
      noteFailure(failure);
      // The ids the batch drew were rolled back with it: nobody was given one.
      const failed = [...taken, ...waitingChecks];
      if (sqliteFault(error) === 'busy') {
        // The lock stayed taken for the whole wait: what was asked meanwhile would wait as long again.
        failed.push(...waiting.takeWrites(), ...checks);
        checks = [];
      }
      for (const waiting of failed) waiting.reject(failure);
      return;
    }
    if (taken.length > 0) fault = undefined;
    if (observeWrite) {
      const batch = { size: taken.length, began: reply.began, committed: reply.committed };
      for (const write of taken) write.observed?.(batch);
    }
    for (const answer of reply.answers) answer();
    // A check proves a small write commits; it clears the fault unless a batch of appends failed since it was asked.
    for (const check of waitingChecks) check.resolve(0);
  }

  const committer = createCommitBatcher({
    commitBatch: runBatch, alsoWaiting: () => checks.length > 0, observeWrite, waitBound: { ms: lockWaitMs, failure: lockWaitedTooLong }, fillTurns: FILL_TURNS,
  });

  // Writes beside the log share a transaction on the writer's connection, between two batches of appends.
  const writeOutsideLog = createSharedTransactions({
    async transaction(leftMs, each) {
      await whileBusy(() => writer.begin(), leftMs);
      try {
        current = await writer.connection();
        await each(aside);
      } catch (error) {
        writer.rollback();
        throw error;
      }
      await writer.commit({ writes: [], writeHealthRow: false, now: clock.now().toISOString() });
    },
    // A fault of the file ends the whole transaction; any other failure is one write's alone.
    endsTransaction: (error) => sqliteFault(error) !== undefined,
    inTurn: (batch) => committer.alone(batch),
    waitMs: lockWaitMs, failure: lockWaitedTooLong, fillTurns: FILL_TURNS,
  });

  return {
    append: committer.append,
    create: committer.create,
    checkWrites() {
      const stalled = committer.stalled();
      if (stalled) return Promise.resolve(stalled);
      const every = fault ? WRITE_CHECK_EVERY_MS.faulty : WRITE_CHECK_EVERY_MS.healthy;
      if (lastCheck && performance.now() - lastCheck.at < every) return lastCheck.outcome.then(() => fault);
      const outcome = new Promise<number>((resolve, reject) => {
        checks.push({ resolve, reject });
        committer.schedule();
      }).then(() => {
        // A small write may fit where the others do not (a page free in a full file): only a check
        // after a quiet spell, or a batch of appends, says the fault is over.
        if (performance.now() - lastFailure >= FAULT_QUIET_MS) fault = undefined;
        return fault;
      }, () => fault);
      lastCheck = { at: performance.now(), outcome };
      return outcome;
    },
    writeOutsideLog,
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

// One batch's transaction, on the writer's own connection.
