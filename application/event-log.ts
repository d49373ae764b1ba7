import { petStreamId } from '../domain/index.ts';
import { InvalidPetQuery, PetNotFound } from './errors.ts';
import type { StoredEvent } from './ports.ts';
import type { Commits } from './commits.ts';

export const DEFAULT_EVENT_LIMIT = 100;
export const MAX_EVENT_LIMIT = 1000;

/** Which events of the log to read: those after a position, optionally only some types or one pet's. */
export interface LogQuery {
  readonly after: number;
  readonly limit: number;
  /** Only events of these types; absent: every type. */
  readonly types?: readonly string[];
  /** Only this stream's events. */
  readonly streamId?: string;
  /** Only events at or before this position; absent: to the end. */
  readonly through?: number;
}

/** The log as readers outside the write path see it: committed events only, in position order. */
export interface EventLog {
  /** Up to `query.limit` committed events after `query.after` that match the filters, in position order. */
  readLog(query: LogQuery): Promise<StoredEvent[]>;
  /** The position of the log's last event (0: none): no position past it was ever given. */
  end(): Promise<number>;
}

export interface ReadEventsInput {
  readonly after?: number;
  readonly limit?: number;
  readonly types?: readonly string[];
  readonly petId?: number;
}

export interface EventPage {
  readonly events: StoredEvent[];
  /** The `after` that continues the feed, or undefined when nothing more exists yet. */
  readonly nextAfter: number | undefined;
}

/** A page of the log after a position, looking one event ahead to tell whether more exist. */
export async function readEvents(ports: { eventLog: Pick<EventLog, 'readLog'> }, input: ReadEventsInput = {}): Promise<EventPage> {
  const query = checkedLogQuery(input);
  const events = await ports.eventLog.readLog({ ...query, limit: query.limit + 1 });
  if (events.length <= query.limit) return { events, nextAfter: undefined };
  events.length = query.limit;
  return { events, nextAfter: events.at(-1)!.position };
}

/** Every event of one pet, oldest first; `PetNotFound` when it has none. */
export async function readPetHistory(ports: { eventLog: Pick<EventLog, 'readLog'> }, petId: number): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  if (Number.isSafeInteger(petId) && petId > 0) {
    for (;;) {
      const page = await ports.eventLog.readLog({ after: events.at(-1)?.position ?? 0, limit: MAX_EVENT_LIMIT, streamId: petStreamId(petId) });
      events.push(...page);
      if (page.length < MAX_EVENT_LIMIT) break;
    }
  }
  if (events.length === 0) throw new PetNotFound(petId);
  return events;
}

/** The query a reader asked for, checked: `after` a position (0 or more), `limit` from 1 to `MAX_EVENT_LIMIT`. */
export function checkedLogQuery(input: ReadEventsInput): LogQuery {
  const after = input.after ?? 0;
  const limit = input.limit ?? DEFAULT_EVENT_LIMIT;
  if (!Number.isSafeInteger(after) || after < 0) throw new InvalidPetQuery('after', 'after must be a log position: an integer from 0 to 2^53-1');
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_EVENT_LIMIT) {
    throw new InvalidPetQuery('limit', `limit must be an integer from 1 to ${MAX_EVENT_LIMIT}`);
  }
  if (input.petId !== undefined && (!Number.isSafeInteger(input.petId) || input.petId < 1)) {
    throw new InvalidPetQuery('petId', 'petId must be a pet id: an integer from 1 to 2^53-1');
  }
  return {
    after,
    limit,
    ...(input.types === undefined ? {} : { types: input.types }),
    ...(input.petId === undefined ? {} : { streamId: petStreamId(input.petId) }),
  };
}

export interface FollowOptions {
  /** Events read at a time: what a follower holds at most besides what it has handed on. */
  readonly pageSize: number;
  /** After this long with nothing new, an empty page: the follower's cue to show it is alive. */
  readonly idleMs: number;
  /** Ends the following, at once even while it waits. */
  readonly signal: AbortSignal;
}

/**
 * Follows the log from `from.after`: first what is there, page by page, then each page of new events
 * as soon as a commit is told. Reads a page only when the caller asks for
 * the next (the log is the buffer), and reads from its own position, so nothing is skipped or repeated.
 */
export async function* followLog(
  ports: { readonly eventLog: Pick<EventLog, 'readLog'>; readonly commits: Pick<Commits, 'onCommitted'> },
  from: Omit<LogQuery, 'limit'>,
  { pageSize, idleMs, signal }: FollowOptions,
): AsyncGenerator<StoredEvent[], void, undefined> {
  let position = from.after;
  let unread = true;
  let wake: (() => void) | undefined;
  const poke = () => wake?.();
  const unsubscribe = ports.commits.onCommitted(() => {
    unread = true;
    poke();
  });
  signal.addEventListener('abort', poke);
  try {
    while (!signal.aborted) {
      if (unread) {
        unread = false;
        const page = await ports.eventLog.readLog({ ...from, after: position, limit: pageSize });
        if (signal.aborted) return;
        if (page.length > 0) {
          position = page.at(-1)!.position;
          if (page.length === pageSize) unread = true;
          yield page;
          continue;
        }
      }
      const woken = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), idleMs);
        wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      wake = undefined;
      if (!woken && !signal.aborted) yield [];
    }
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', poke);
  }
}
