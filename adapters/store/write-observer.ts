/** One group commit as its appends saw it: how many it held, when they began to run and when the commit ended (`performance.now()` milliseconds). */
export interface GroupTiming {
  readonly size: number;
  readonly began: number;
  readonly committed: number;
}

/**
 * Told of each write a store commits in groups (for tracing). Called as the write is asked for, in its
 * caller's async context; what it returns hears of the write's group once that group has committed.
 */
export type WriteObserver = () => ((group: GroupTiming) => void) | undefined;
