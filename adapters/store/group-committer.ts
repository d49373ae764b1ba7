import type { AppendResult, EventStore, PetIds } from '../../application/index.ts';
import type { PendingAppend } from './group-rows.ts';
import type { WriteObserver } from './write-observer.ts';

/** A caller waiting for a new pet's id. */
export interface IdWanted {
  readonly resolve: (id: number) => void;
  readonly reject: (error: unknown) => void;
}

/** What is waiting for the next group: the backend takes what its group commits, and answers it. */
export interface GroupWaiting {
  /** The appends waiting, oldest first, at most `most`; taken out of the queue. */
  takeAppends(most?: number): PendingAppend[];
  /** The callers waiting for new pet ids; taken out of the queue. */
  takeIds(): IdWanted[];
  /** Whether anything is waiting (appends, ids, or the backend's own `alsoWaiting`). */
  asked(): boolean;
}

export interface GroupCommitter {
  readonly append: EventStore['append'];
  readonly petIds: PetIds;
  /** Wakes the committer for what the backend queued itself (see `alsoWaiting`). */
  schedule(): void;
  /** Runs `work` between two groups, alone. */
  alone<T>(work: () => Promise<T>): Promise<T>;
  /** Resolves when everything asked for so far has committed or failed. */
  drain(): Promise<void>;
}

export interface GroupCommitterOptions {
  /**
   * Commits one group from what is waiting, answering every append and id it took. Runs one at a time;
   * never rejects. The next group takes what was asked for meanwhile.
   */
  readonly commitGroup: (waiting: GroupWaiting) => Promise<void>;
  /** Whether the backend has work of its own queued for the next group (a write check). */
  readonly alsoWaiting?: () => boolean;
  readonly observeWrite?: WriteObserver | undefined;
}

/**
 * Group commit, the same for every backend: the appends and new ids asked for while the previous group
 * commits (at least one turn of the event loop) wait together for the next group, one group at a time;
 * nobody is answered before the commit. How a group's rows are read and written is the backend's
 * (`commitGroup`).
 */
export function createGroupCommitter({ commitGroup, alsoWaiting, observeWrite }: GroupCommitterOptions): GroupCommitter {
  let appends: PendingAppend[] = [];
  let ids: IdWanted[] = [];
  let scheduled = false;
  let running = 0;
  /** The group under way, or the work run alone: one at a time. */
  let exclusive: Promise<unknown> = Promise.resolve();

  const waiting: GroupWaiting = {
    takeAppends(most = Infinity) {
      const taken = appends.slice(0, most);
      appends = appends.slice(taken.length);
      return taken;
    },
    takeIds() {
      const taken = ids;
      ids = [];
      return taken;
    },
    asked: () => appends.length > 0 || ids.length > 0 || (alsoWaiting?.() ?? false),
  };

  function alone<T>(work: () => Promise<T>): Promise<T> {
    const turn = exclusive.then(work);
    exclusive = turn.catch(() => {});
    return turn;
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      running += 1;
      void alone(() => (waiting.asked() ? commitGroup(waiting) : Promise.resolve())).finally(() => {
        running -= 1;
        // What was asked for while this group was under way.
        if (waiting.asked()) schedule();
      });
    });
  }

  return {
    append(streamId, expected, events, metadata, options) {
      return new Promise<AppendResult>((resolve, reject) => {
        appends.push({ request: { streamId, expected, events, metadata, options }, resolve, reject, observed: observeWrite?.() });
        schedule();
      });
    },
    petIds: {
      next() {
        return new Promise<number>((resolve, reject) => {
          ids.push({ resolve, reject });
          schedule();
        });
      },
    },
    schedule,
    alone,
    async drain() {
      while (scheduled || running > 0 || waiting.asked()) {
        if (running > 0) await exclusive;
        else if (scheduled) await new Promise((resolve) => setImmediate(resolve));
        else schedule();
      }
    },
  };
}
