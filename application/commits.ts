/**
 * A read-model row a commit changed (`table`, `id`), with the statuses it left and entered (`null`:
 * none; a new row has only its status after).
 */
export interface RowChange {
  readonly table: string;
  readonly id: number;
  readonly statuses: readonly (string | null)[];
}

/** Positions of the log committed, with the read-model rows they changed. */
export interface Commit {
  /** The log's last position after it, where known. */
  readonly last?: number;
  /** The rows it changed; undefined: anything may have changed (another process's commit, a write around the store). */
  readonly changes?: readonly RowChange[];
  /** The types of the events it appended; undefined: any type may have been appended. */
  readonly types?: readonly string[];
}

/**
 * Says what was committed: this process's commits as they commit, with the pets they changed, and,
 * where the store can see them, other processes' and instances'. One notice for every follower of the
 * log: the event feed and webhook deliveries read on from their own position, the listing cache drops
 * what a commit touched, read positions make the cache take in what a read asks for.
 */
export interface Commits {
  /** Calls `listener` after each commit; returns the unsubscribe. A listener that throws does not keep the others from hearing. */
  onCommitted(listener: (commit: Commit) => void): () => void;
  /**
   * Looks for commits the store did not tell of itself: other processes', or writes that went around
   * it. Where it returns a promise (SQLite's file, PostgreSQL), the listeners have heard of every commit
   * made before the call by the time it resolves: callers share a look that began after they asked.
   */
  refresh(): void | Promise<void>;
}
