import type { CommitSignal } from '../../application/index.ts';

/** The store's side of `CommitSignal`: the backend says when the log may have grown. */
export interface CommitSignalSource extends CommitSignal {
  /** Tells every listener; a listener that throws does not keep the others from hearing. */
  committed(position?: number): void;
  /** How many listen now: a backend watches for other processes' commits only while anyone does. */
  readonly listening: number;
}

export function createCommitSignal(options: { onFirstListener?: () => void; onLastListener?: () => void } = {}): CommitSignalSource {
  const listeners = new Set<(position: number | undefined) => void>();
  return {
    committed(position) {
      for (const listener of [...listeners]) {
        try {
          listener(position);
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
      const own = (position: number | undefined) => listener(position);
      listeners.add(own);
      if (listeners.size === 1) options.onFirstListener?.();
      return () => {
        if (!listeners.delete(own)) return;
        if (listeners.size === 0) options.onLastListener?.();
      };
    },
  };
}
