/**
 * The share of wall time that background work (webhook delivery's reads and writes, replays, lease
 * rounds, sweeps) may take in a process while it is serving requests; with no request for a while it
 * takes what is free.
 */
export const BACKGROUND_SHARE = 1 / 3;
/** A request taken within this long means the process is serving requests. */
const SERVING_WITHIN_MS = 100;
/** The longest pause after one piece of work: a slow piece slows background work, never stops it. */
const MAX_PAUSE_MS = 100;

/**
 * Background work in turns, in two lanes: the database's (reads and writes) and the outbound requests'
 * (webhook deliveries), so that a subscription's next request goes out while its last position is stored.
 * In each lane one piece runs at a time in the process, the owners (API keys) taking turns, each owner's
 * pieces in order. Between two pieces the event loop gets a turn (`setImmediate`), and while requests are
 * being served a pause keeps each lane within `share` of the time: a piece that took 2 ms is followed by
 * 4 ms for requests at a third. One key's twenty subscriptions thus get as many turns as another key's
 * one, and requests the rest.
 */
export interface BackgroundWork {
  /** Runs database work in `owner`'s next turn; resolves or rejects as it does. Never call it from inside a piece. */
  run<T>(owner: string, work: () => Promise<T>): Promise<T>;
  /** Runs an outbound request's piece (building, signing, sending it) in `owner`'s next turn of the requests' lane. */
  send<T>(owner: string, work: () => Promise<T>): Promise<T>;
  /** A request was taken (called by the server for each). */
  requestTaken(): void;
}

export interface BackgroundWorkOptions {
  readonly share?: number;
  readonly now?: () => number;
  /** Calls `then` after `ms` (a pause for requests), or at the event loop's next turn when `ms` is 0. */
  readonly after?: (ms: number, then: () => void) => void;
}

export function createBackgroundWork(options: BackgroundWorkOptions = {}): BackgroundWork {
  const now = options.now ?? (() => performance.now());
  let lastRequestAt = -Infinity;
  const lane = createLane({
    share: options.share ?? BACKGROUND_SHARE,
    now,
    after: options.after ?? ((ms, then) => (ms >= 1 ? setTimeout(then, ms) : setImmediate(then))),
    serving: () => now() - lastRequestAt < SERVING_WITHIN_MS,
  });
  const database = lane();
  const requests = lane();
  return {
    run: database,
    send: requests,
    requestTaken() {
      lastRequestAt = now();
    },
  };
}

type Lane = <T>(owner: string, work: () => Promise<T>) => Promise<T>;

function createLane(options: { share: number; now: () => number; after: (ms: number, then: () => void) => void; serving: () => boolean }): () => Lane {
  const { share, now, after, serving } = options;
  return () => {
    /** Each owner's waiting pieces, owners in the order of their turns (an owner served goes to the back). */
    const waiting = new Map<string, (() => void)[]>();
    let running = false;

    const startNext = () => {
      if (running) return;
      const first = waiting.entries().next();
      if (first.done) return;
      const [owner, pieces] = first.value;
      waiting.delete(owner);
      const start = pieces.shift()!;
      if (pieces.length > 0) waiting.set(owner, pieces);
      running = true;
      start();
    };

    const finished = (startedAt: number) => {
      const took = now() - startedAt;
      const pause = serving() ? Math.min(MAX_PAUSE_MS, (took * (1 - share)) / share) : 0;
      after(pause >= 1 ? Math.round(pause) : 0, () => {
        running = false;
        startNext();
      });
    };

    return <T>(owner: string, work: () => Promise<T>): Promise<T> => new Promise<T>((resolve, reject) => {
      const start = () => {
        const startedAt = now();
        let result: Promise<T>;
        try {
          result = work();
        } catch (error) {
          result = Promise.reject(error);
        }
        result.then(resolve, reject).finally(() => finished(startedAt));
      };
      const pieces = waiting.get(owner);
      if (pieces) pieces.push(start);
      else waiting.set(owner, [start]);
      startNext();
    });
  };
}
