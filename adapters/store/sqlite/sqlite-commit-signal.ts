import type { CommitSignal } from '../../../application/index.ts';
import type { CatalogChanges } from '../catalog-changes.ts';
import { createCommitSignal } from '../commit-signal.ts';

/** How often the file is looked at for other processes' commits while anyone listens: one pread each time. */
export const OTHER_COMMITS_POLL_MS = 20;

/**
 * The log may have grown whenever the commit watch reports a commit: this process's at once, other
 * processes' (seen in the WAL-index header) at the next look, taken every `pollMs` while anyone listens.
 */
export function sqliteCommitSignal(watch: CatalogChanges, pollMs = OTHER_COMMITS_POLL_MS): CommitSignal & { close(): void } {
  let poll: ReturnType<typeof setInterval> | undefined;
  const stopPolling = () => {
    if (poll !== undefined) clearInterval(poll);
    poll = undefined;
  };
  const signal = createCommitSignal({
    onFirstListener() {
      poll = setInterval(() => {
        try {
          watch.refresh();
        } catch {
          // The file could not be read this time: the next look tries again.
        }
      }, pollMs);
      poll.unref();
    },
    onLastListener: stopPolling,
  });
  watch.subscribe(() => {
    if (signal.listening > 0) signal.committed();
  });
  return { onCommitted: signal.onCommitted, close: stopPolling };
}
