import type { Commit, Commits } from '../../application/index.ts';

/** Who hears of commits: the bookkeeping every backend's `Commits` shares. */
export interface CommitListeners {
  readonly onCommitted: Commits['onCommitted'];
  /** Tells every listener; a listener that throws does not keep the others from hearing. */
  tell(commit: Commit): void;
  /** How many listen now. */
  readonly listening: number;
}

/**
 * The listeners of one store's commits. A backend watches for other processes' commits only while
 * anyone listens: `onFirstListener` starts that, `onLastListener` stops it.
 */
export function createCommitListeners(options: { onFirstListener?: () => void; onLastListener?: () => void } = {}): CommitListeners {
  const listeners = new Set<(commit: Commit) => void>();
  return {
    tell(commit) {
      for (const listener of [...listeners]) {
        try {
          listener(commit);
        } catch {
          // A listener's failure is its own; the commit has happened for everyone else.
        }
      }
    },
    get listening() {
      return listeners.size;
    },
    onCommitted(listener) {
      // Each subscription is its own, even when one function listens twice.
      const own = (commit: Commit) => listener(commit);
      listeners.add(own);
      if (listeners.size === 1) options.onFirstListener?.();
      return () => {
        if (!listeners.delete(own)) return;
        if (listeners.size === 0) options.onLastListener?.();
      };
    },
  };
}
