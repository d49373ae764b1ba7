import { StoreUnavailable } from '../../../application/index.ts';
import type { AppendResult, Created, EventStore } from '../../../application/index.ts';
import type { PendingWrite } from './batch-rows.ts';
import type { WriteObserver } from './write-observer.ts';

/** What is waiting for the next batch: the backend takes what its batch commits, and answers it. */
export interface BatchWaiting {
  /**
   * The appends and creations waiting, oldest first, at most `most`; taken out of the queue. A batch
   * takes them once it holds its lock, and draws the creations' ids itself.
   */
  takeWrites(most?: number): PendingWrite[];
  /** Whether anything is waiting (writes, or the backend's own `alsoWaiting`). */
  asked(): boolean;
  /**
   * Whether something this batch took was refused for waiting past the bound (`waitBound`): the batch
   * must not commit then, since that write was answered as failed.
   */
  overdue(): boolean;
}

export interface CommitBatcher {
  readonly append: EventStore['append'];
  readonly create: EventStore['create'];
  /** Wakes the committer for what the backend queued itself (see `alsoWaiting`). */
  schedule(): void;
  /** Runs `work` between two batches, alone. */
  alone<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` beside the batches (not in turn with them), answered within the wait bound from now as a
   * write is (`waitBound`): past it, refused with its failure, and `overdue()` tells `work` so, which then
   * must not commit. Without a bound, `work` alone says when it ends.
   */
  beside<T>(work: (overdue: () => boolean) => Promise<T>): Promise<T>;
  /** Resolves when everything asked for so far has committed or failed. */
  drain(): Promise<void>;
  /**
   * The fault when the batch or the work alone under way has run longer than `STALLED_MS` (a batch
   * takes milliseconds): writes cannot commit now. Undefined otherwise.
   */
  stalled(): StoreUnavailable | undefined;
}

/** A batch or a work alone under way longer than this means writes cannot commit now (for readiness). */
export const STALLED_MS = 1000;

/** How long a write may wait, from its arrival, for its answer; past it, it is refused with `failure`. */
export interface WaitBound {
  readonly ms: number;
  readonly failure: () => Error;
}

export interface CommitBatcherOptions {
  /**
   * Commits one batch from what is waiting, answering every write it took. Runs one at a time;
   * never rejects. The next batch takes what was asked for meanwhile.
   */
  readonly commitBatch: (waiting: BatchWaiting) => Promise<void>;
  /** Whether the backend has work of its own queued for the next batch (a write check). */
  readonly alsoWaiting?: () => boolean;
  readonly observeWrite?: WriteObserver | undefined;
  /**
   * The longest a write waits from its arrival, whatever is queued before it or holds the
   * batch it is in: then it is rejected (`WaitBound.failure`), and an answer the batch gives later is
   * ignored. Undefined: no bound.
   */
  readonly waitBound?: WaitBound | undefined;
  /**
   * Turns of the event loop a batch may wait, before it takes its lock, while writes keep arriving
   * (none when none came in the last turn): fuller batches under load, for no wait when idle.
   */
  readonly fillTurns?: number;
}

/**
 * Calls `then` on the next turn of the event loop, or, while `arrived()` (what waits for the batch) still
 * grows, up to `turns` turns later: fuller batches under load, for no wait when idle.
 */
export function afterArrivals(arrived: () => number, turns: number, then: () => void): void {
  let waited = 0;
  let seen = arrived();
  const start = () => {
    if (waited < turns && arrived() > seen) {
      waited += 1;
      seen = arrived();
      setImmediate(start);
      return;
    }
    then();
  };
  setImmediate(start);
}

/** Something waiting for a batch, with the moment (`performance.now()`) past which it is refused. */
interface Waiting<T> {
  readonly entry: T;
  readonly deadline: number;
}

/**
 * Commit batching, the same for every backend: the appends and creations asked for while the previous batch
 * commits (at least one turn of the event loop) wait together for the next batch, one batch at a time;
 * nobody is answered before the commit. A creation's id is drawn by the batch that appends it, and its
 * append built then, synchronously: no batch waits for application code. How a batch's rows are read
 * and written is the backend's (`commitBatch`).
 */
export function createCommitBatcher({ commitBatch, alsoWaiting, observeWrite, waitBound, fillTurns = 0 }: CommitBatcherOptions): CommitBatcher {
  let writes: Waiting<PendingWrite>[] = [];
  /** What the batch under way took, while `waitBound` holds: refused past its deadline as what still waits is. */
  let taken: Waiting<{ reject(error: unknown): void }>[] = [];
  /** Something the batch under way took was refused past its deadline. */
  let takenRefused = false;
  /** Work running beside the batches (`beside`), refused past its deadline as a write is. */
  let besides: Waiting<{ reject(error: unknown): void }>[] = [];
  let scheduled = false;
  let running = 0;
  /** The batch under way, or the work run alone: one at a time. */
  let exclusive: Promise<unknown> = Promise.resolve();
  /** When the batch or the work alone under way began (`performance.now()`); undefined between them. */
  let underWaySince: number | undefined;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;

  const deadline = waitBound ? () => performance.now() + waitBound.ms : () => Infinity;

  const waiting: BatchWaiting = {
    takeWrites(most = Infinity) {
      const out = writes.length <= most ? writes : writes.slice(0, most);
      writes = out === writes ? [] : writes.slice(out.length);
      if (waitBound) taken.push(...out);
      return out.map((each) => each.entry);
    },
    asked: () => writes.length > 0 || (alsoWaiting?.() ?? false),
    overdue: () => takenRefused,
  };

  /** Arms the timer for the earliest deadline of what waits or the batch under way took, unless it is armed. */
  function watchDeadlines(): void {
    if (waitBound === undefined || deadlineTimer !== undefined) return;
    let next = writes[0]?.deadline ?? Infinity;
    for (const each of taken) next = Math.min(next, each.deadline);
    for (const each of besides) next = Math.min(next, each.deadline);
    if (next === Infinity) return;
    deadlineTimer = setTimeout(refuseOverdue, Math.max(0, next - performance.now()));
    deadlineTimer.unref();
  }

  /** Refuses what has waited past its bound, queued or in the batch under way (whose later answer is then ignored). */
  function refuseOverdue(): void {
    deadlineTimer = undefined;
    const now = performance.now();
    const due = (each: Waiting<unknown>) => each.deadline <= now;
    const refused: Waiting<{ reject(error: unknown): void }>[] = writes.filter(due);
    const takenDue = taken.filter(due);
    if (takenDue.length > 0) takenRefused = true;
    refused.push(...takenDue, ...besides.filter(due));
    if (refused.length > 0) {
      const kept = (each: Waiting<unknown>) => !due(each);
      writes = writes.filter(kept);
      taken = taken.filter(kept);
      besides = besides.filter(kept);
      const failure = waitBound!.failure();
      for (const each of refused) each.entry.reject(failure);
    }
    watchDeadlines();
  }

  function alone<T>(work: () => Promise<T>): Promise<T> {
    const turn = exclusive.then(async () => {
      underWaySince = performance.now();
      try {
        return await work();
      } finally {
        underWaySince = undefined;
      }
    });
    exclusive = turn.catch(() => {});
    return turn;
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    afterArrivals(() => writes.length, fillTurns, () => {
      scheduled = false;
      running += 1;
      void alone(() => (waiting.asked() ? commitBatch(waiting) : Promise.resolve())).finally(() => {
        running -= 1;
        taken = [];
        takenRefused = false;
        // What was asked for while this batch was under way.
        if (waiting.asked()) schedule();
      });
    });
  }

  function enqueue(write: PendingWrite): void {
    writes.push({ entry: write, deadline: deadline() });
    watchDeadlines();
    schedule();
  }

  return {
    append(streams, metadata, options) {
      return new Promise<AppendResult>((resolve, reject) => {
        enqueue({ request: { streams, metadata, options }, resolve, reject, observed: observeWrite?.() });
      });
    },
    create(sequence, build, reads = []) {
      return new Promise<Created>((resolve, reject) => enqueue({ sequence, build, reads, resolve, reject, observed: observeWrite?.() }));
    },
    schedule,
    alone,
    beside(work) {
      return new Promise((resolve, reject) => {
        let refused = false;
        const waiting: Waiting<{ reject(error: unknown): void }> = {
          entry: {
            reject(error) {
              refused = true;
              reject(error);
            },
          },
          deadline: deadline(),
        };
        besides.push(waiting);
        watchDeadlines();
        work(() => refused).then(resolve, reject).finally(() => {
          besides = besides.filter((each) => each !== waiting);
        });
      });
    },
    async drain() {
      while (scheduled || running > 0 || waiting.asked()) {
        if (running > 0) await exclusive;
        else if (scheduled) await new Promise((resolve) => setImmediate(resolve));
        else schedule();
      }
    },
    stalled() {
      const since = underWaySince === undefined ? 0 : performance.now() - underWaySince;
      if (since <= STALLED_MS) return undefined;
      return new StoreUnavailable(`writes have waited ${(since / 1000).toFixed(1)} s for the database; try again`);
    },
  };
}
