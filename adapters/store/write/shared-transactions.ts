import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { afterArrivals } from './commit-batcher.ts';
import type { PetStoreDatabase } from '../schema.ts';

type Db = Kysely<PetStoreDatabase>;

/** How a backend runs the transaction that writes beside the log share (see `createSharedTransactions`). */
export interface SharedTransactionBackend {
  /**
   * Runs `each` in one transaction, begun within `leftMs` (the earliest deadline of what it holds) and
   * committed when `each` resolves (rolled back when it rejects). Rejects when the transaction did not commit.
   */
  transaction(leftMs: number, each: (on: Db) => Promise<void>): Promise<void>;
  /** Whether a write's failure ends the whole transaction (the file or the connection failed), not its savepoint alone. */
  endsTransaction(error: unknown): boolean;
  /** Runs a batch in its turn with the backend's other work (SQLite: between batches of appends, on its one writer). */
  inTurn(batch: () => Promise<void>): Promise<void>;
  /** How long a write waits from its arrival for its transaction to begin; then it is refused with `failure` (undefined: no bound). */
  readonly waitMs: number | undefined;
  readonly failure: () => Error;
  /** Turns of the event loop a batch waits, before it begins, while writes keep arriving. */
  readonly fillTurns: number;
}

interface Waiting {
  readonly work: (db: Db) => Promise<unknown>;
  readonly resolve: (value: any) => void;
  readonly reject: (error: unknown) => void;
  readonly deadline: number;
  state: 'waiting' | 'refused' | 'taken';
  readonly overdue: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Writes beside the log (consumer groups' claims and acks, webhook delivery state) that wait for their
 * turn share one transaction and one commit (SQLite's fsync, PostgreSQL's flush): each runs in a savepoint
 * of its own, so one that fails is rolled back alone, having written nothing, and nobody is answered
 * before the commit. One batch at a time; what arrives meanwhile waits for the next. A write is refused
 * with the backend's failure when its transaction has not begun within `waitMs` of its arrival.
 */
export function createSharedTransactions(backend: SharedTransactionBackend): <T>(work: (db: Db) => Promise<T>) => Promise<T> {
  let waiting: Waiting[] = [];
  let scheduled = false;
  /** The batch under way: the next begins once it ends. */
  let underWay: Promise<void> = Promise.resolve();

  async function runBatch(): Promise<void> {
    scheduled = false;
    const taken = waiting.filter((write) => write.state === 'waiting');
    waiting = [];
    for (const write of taken) {
      write.state = 'taken';
      clearTimeout(write.overdue);
    }
    if (taken.length === 0) return;
    const failAll = (error: unknown) => {
      for (const write of taken) write.reject(error);
    };
    // Refused while they waited their turn: they must not write now.
    const left = Math.min(...taken.map((write) => write.deadline)) - performance.now();
    if (left <= 0) return failAll(backend.failure());
    const done: { readonly write: Waiting; readonly result: unknown }[] = [];
    // A write alone needs no savepoint: its failure rolls the transaction back. Savepoints are left unreleased:
    // the name used again marks a new one, ROLLBACK TO goes to the newest (the failed write's), and COMMIT
    // ends them all (a statement fewer a write, a round trip on PostgreSQL).
    const alone = taken.length === 1;
    try {
      await backend.transaction(left, async (on) => {
        for (const write of taken) {
          if (!alone) await sql`savepoint beside_the_log`.execute(on);
          try {
            done.push({ write, result: await write.work(on) });
          } catch (error) {
            if (alone || backend.endsTransaction(error)) throw error;
            await sql`rollback to beside_the_log`.execute(on);
            write.reject(error);
          }
        }
      });
    } catch (error) {
      // Rolled back, or its commit failed: none of it is answered as done.
      return failAll(error);
    }
    for (const { write, result } of done) write.resolve(result);
  }

  return (work) => new Promise((resolve, reject) => {
    const { waitMs } = backend;
    const write: Waiting = {
      work, resolve, reject, deadline: waitMs === undefined ? Infinity : performance.now() + waitMs, state: 'waiting',
      overdue: waitMs === undefined ? undefined : setTimeout(() => {
        if (write.state !== 'waiting') return;
        write.state = 'refused';
        reject(backend.failure());
      }, waitMs),
    };
    write.overdue?.unref();
    waiting.push(write);
    if (scheduled) return;
    scheduled = true;
    // Writes still arriving (the claims of a group's other consumers) join this transaction and its commit.
    afterArrivals(() => waiting.length, backend.fillTurns, () => {
      underWay = underWay.then(() => backend.inTurn(runBatch)).catch(() => {});
    });
  });
}
