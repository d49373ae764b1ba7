/** One batch commit as its appends saw it: how many it held, when they began to run and when the commit ended (`performance.now()` milliseconds). */
export interface BatchTiming {
  readonly size: number;
  readonly began: number;
  readonly committed: number;
}

/**
 * Told of each write a store commits in batches (for tracing). Called as the write is asked for, in its
 * caller's async context; what it returns hears of the write's batch once that batch has committed.
 */
export type WriteObserver = () => ((batch: BatchTiming) => void) | undefined;
