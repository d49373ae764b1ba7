import type { CommitSignal, EventLog, StoredEvent } from '../../../application/index.ts';
import type { CatalogChanges, CatalogListener, PetChange } from '../catalog-changes.ts';
import type { CommittedPositions } from './postgres-writes.ts';

/** How many events one look reads; a cache further behind than this drops every answer instead of reading on. */
export const CATCH_UP_EVENTS = 1000;

export interface PostgresCatalogChanges extends CatalogChanges {
  refresh(): Promise<void>;
  /** A group this instance committed, told before its commit is signalled. */
  committedHere(group: CommittedPositions): void;
  close(): void;
}

/**
 * The catalogue's changes on PostgreSQL, read from the log: any instance's commits, in position order
 * (appends commit in the order of their positions, see APPEND_LOCK), with the pets they changed and the
 * statuses they left and entered, so the listing cache drops exactly what they touch.
 *
 * A notification of a commit (`commits`) starts a look at once; but a notification may come late, so
 * `refresh` looks too, and resolves only after a look that began after it was called. One look answers
 * every caller that arrived while the previous one was in flight (as a group commit does for writes).
 * Most looks find nothing new, so a look that no notification announced first asks only where the log
 * ends (a far cheaper statement than reading events), and reads the events after the position already
 * told only when the log ends beyond it. This instance's own groups need no look when they directly
 * follow what was told: their positions were drawn under the append lock, so no other commit lies between.
 */
export function postgresCatalogChanges(
  log: EventLog & { head(): Promise<number> }, commits: CommitSignal,
): PostgresCatalogChanges {
  const listeners: CatalogListener[] = [];
  /** Every commit up to this position has been told; undefined before the first look. */
  let told: number | undefined;
  /** The callers waiting for a look that has not begun yet. */
  let waiting: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | undefined;
  /** A notified position beyond `told`: worth a look even when nobody waits. */
  let notified = 0;
  /** A look is running, or about to: it will serve whoever asks meanwhile. */
  let looking = false;
  let stopListening: (() => void) | undefined;

  const tell = (changes: readonly PetChange[] | undefined) => {
    for (const listener of listeners) listener(changes);
  };

  /** Reads what was committed after `told`, tells it, and moves `told` on; `announced`: a notification said something is new. */
  async function look(announced: boolean): Promise<void> {
    if (told === undefined) {
      // The first look only learns where the log ends: whatever is cached before it is dropped.
      told = await log.head();
      tell(undefined);
      return;
    }
    if (!announced && (await log.head()) <= told) return;
    const events = await log.readLog({ after: told, limit: CATCH_UP_EVENTS });
    // This instance's own group may have been told meanwhile, and with it what the read found.
    if (events.length === 0 || events.at(-1)!.position <= told) return;
    told = events.at(-1)!.position;
    if (events.length === CATCH_UP_EVENTS) {
      // Far behind: dropping everything is cheaper than reading on, and the log's end is found afresh.
      told = undefined;
      tell(undefined);
      return look(false);
    }
    const changes = events.map(changeOf);
    tell(changes.includes(undefined) ? undefined : changes as PetChange[]);
  }

  /** Starts looking after the current turn of the event loop, so that every request of the turn shares the first look. */
  function startLooking(): void {
    if (looking) return;
    looking = true;
    setImmediate(() => void lookWhileWanted());
  }

  /** A notification told of a commit beyond what was told. */
  const announced = () => told !== undefined && notified > told;

  async function lookWhileWanted(): Promise<void> {
    try {
      while (waiting !== undefined || announced()) {
        const callers = waiting;
        waiting = undefined;
        const lookAnnounced = announced();
        // A notification during this look asks for another; a failed look waits for the next one or a caller.
        notified = 0;
        try {
          await look(lookAnnounced);
          callers?.resolve();
        } catch (error) {
          callers?.reject(error);
        }
      }
    } finally {
      looking = false;
    }
  }

  return {
    subscribe(listener) {
      listeners.push(listener);
      stopListening ??= commits.onCommitted((position) => {
        // No position: rows may have changed without events (a projection rebuild).
        if (position === undefined) tell(undefined);
        else if (told !== undefined && position <= told) return;
        notified = position ?? Number.MAX_SAFE_INTEGER;
        startLooking();
      });
    },
    committedHere({ drawnFrom, last, changes }) {
      if (told === undefined || told < drawnFrom - 1 || told >= last) return;
      told = last;
      tell(changes);
    },
    refresh() {
      if (waiting === undefined) {
        let resolve!: () => void;
        let reject!: (error: unknown) => void;
        const promise = new Promise<void>((resolved, rejected) => {
          resolve = resolved;
          reject = rejected;
        });
        waiting = { promise, resolve, reject };
      }
      const { promise } = waiting;
      startLooking();
      return promise;
    },
    close() {
      stopListening?.();
      stopListening = undefined;
    },
  };
}

/** The pet an event changed, with the statuses it left and entered; undefined for an event this reader does not know. */
function changeOf({ event }: StoredEvent): PetChange | undefined {
  switch (event.type) {
    case 'PetAdded':
      return { id: event.data.id, statuses: [event.data.status] };
    case 'PetStatusChanged':
      return { id: event.data.id, statuses: [event.data.from, event.data.to] };
    default:
      return undefined;
  }
}
