// The fresh events a claim takes from the log past its group's cursor: the page it reads, and its walk of it.
import type { EventLog, LogQuery } from '../event-log.ts';
import type { StoredEvent } from '../ports.ts';
import { GROUP_LIMITS } from './group-settings.ts';
import type { ConsumerGroup } from './group-settings.ts';

/**
 * The log's events past a group's cursor that a claim read for it (the group's types only, in position
 * order), from `after`, the cursor it read at: a claim leases them straight from the log, or keeps as
 * waiting those its pet holds back, at most `holdRoom` of them. `events` absent: not read yet, the claim
 * reads the page after the cursor in its own transaction.
 */
export interface FreshEvents {
  readonly after: number;
  readonly events?: readonly StoredEvent[] | undefined;
  /**
   * Set when `events` are every event of the group's types in (`after`, `readTo`]: once they are all walked,
   * the cursor moves to `readTo`, past the events of other types, so that no later claim reads them again.
   */
  readonly readTo?: number | undefined;
  /** Absent: counted in the claim's transaction (`holdRoomOf`), where the claim reads its page. */
  readonly holdRoom?: number | undefined;
}

/** `FreshEvents` read, with the room to hold events back. */
export type FreshPage = FreshEvents & { readonly events: readonly StoredEvent[]; readonly holdRoom: number };

/** How many more events a group holding `unsettled` unsettled events may take in and keep waiting (see `GROUP_LIMITS.takenAhead`). */
export function holdRoomOf(unsettled: number): number {
  return GROUP_LIMITS.takenAhead - unsettled;
}

/** The page a claim walks: `fresh` as read while the cursor is still where it was read from, else the page after the cursor, read from `log`. */
export async function freshPage(fresh: FreshEvents & { readonly holdRoom: number }, group: ConsumerGroup, max: number, log: LogToEnd): Promise<FreshPage> {
  return fresh.events !== undefined && fresh.after === group.takenTo ? fresh as FreshPage : { ...fresh, ...(await readFreshPage(log, group, max)) };
}

/**
 * The page a claim walks (`freshPage`), its hold room counted from the group's `unsettled` events when the
 * claim did not count it before its transaction; undefined when the group may take no more in.
 */
export async function claimPage(
  fresh: FreshEvents | undefined, group: ConsumerGroup, max: number, log: LogToEnd, unsettled: () => number | Promise<number>,
): Promise<FreshPage | undefined> {
  if (fresh === undefined) return undefined;
  const holdRoom = fresh.holdRoom ?? holdRoomOf(await unsettled());
  return holdRoom > 0 ? freshPage({ ...fresh, holdRoom }, group, max, log) : undefined;
}

/** A page of the log and where the log ended when it was read: no event up to `end` is missing from a page shorter than its limit. */
export interface LogToEnd {
  readLogToEnd(query: LogQuery): Promise<{ readonly events: StoredEvent[]; readonly end: number }>;
}

/**
 * `LogToEnd` from a log's two reads, its end read first: commits become visible in position order, so the
 * page, read up to that end, holds every event of it up to there (a store may read both in one statement).
 */
export function logToEnd(log: Pick<EventLog, 'readLog' | 'end'>): LogToEnd {
  return {
    async readLogToEnd(query) {
      const end = await log.end();
      return { events: await log.readLog({ ...query, through: end }), end };
    },
  };
}

/**
 * The group's page of the log past its cursor (`freshPageQuery`) and the log's end it was read at: a page
 * shorter than its limit holds every event of the group's types up to that end (`readTo`), and the claim
 * that walks it moves the cursor there. A group that takes types the log seldom holds thus reads the
 * others once, not at every claim.
 */
export async function readFreshPage(log: LogToEnd, group: ConsumerGroup, max: number): Promise<Pick<FreshPage, 'after' | 'events' | 'readTo'>> {
  const query = freshPageQuery(group, max);
  const { events, end } = await log.readLogToEnd(query);
  return { after: group.takenTo, events, ...(events.length < query.limit ? { readTo: end } : {}) };
}

/** What a claim does with the fresh events it walked (see `walkFresh`). */
export interface FreshWalk {
  readonly lease: readonly StoredEvent[];
  /** Held back by an earlier unsettled event of their pet: kept waiting in the group. */
  readonly hold: readonly StoredEvent[];
  /** The group's cursor past them. */
  readonly cursor: number;
}

/**
 * Where a claim whose page held none of the group's types leaves its cursor: past the events of other
 * types up to the end it read (`readTo`, as `walkFresh` does for a page it walks whole); undefined when it stays.
 */
export function cursorPastOtherTypes(page: FreshPage | undefined, takenTo: number): number | undefined {
  return page !== undefined && page.events.length === 0 && page.readTo !== undefined && page.readTo > takenTo ? page.readTo : undefined;
}

/**
 * The pets of these fresh events (in position order) that may have an unsettled event before them: those
 * whose first event here is not their first (at stream version 1 nothing of its pet came before).
 */
export function petsWithEarlierEvents(events: readonly StoredEvent[]): string[] {
  const met = new Set<string>();
  const earlier: string[] = [];
  for (const stored of events) {
    if (met.has(stored.streamId)) continue;
    met.add(stored.streamId);
    if (stored.streamVersion > 1) earlier.push(stored.streamId);
  }
  return earlier;
}

/**
 * Walks `fresh` in position order: an event whose pet has an unsettled event before it (one of the
 * group's, `unsettledStreams`, or one met earlier in the walk) is held back, any other leased; the walk
 * stops before the event that would lease one more than `room` or hold one more than `fresh.holdRoom`.
 */
export function walkFresh(fresh: FreshPage, room: number, unsettledStreams: ReadonlySet<string>): FreshWalk {
  const lease: StoredEvent[] = [];
  const hold: StoredEvent[] = [];
  const met = new Set<string>();
  let cursor = fresh.after;
  for (const stored of fresh.events) {
    const held = unsettledStreams.has(stored.streamId) || met.has(stored.streamId);
    if (held ? hold.length >= fresh.holdRoom : lease.length >= room) break;
    (held ? hold : lease).push(stored);
    met.add(stored.streamId);
    cursor = stored.position;
  }
  const walkedAll = lease.length + hold.length === fresh.events.length;
  return { lease, hold, cursor: walkedAll && fresh.readTo !== undefined ? Math.max(cursor, fresh.readTo) : cursor };
}

/**
 * The page of the log past the group's cursor that a claim of `max` reads: at least a full claim long, as
 * events whose pet holds them back are passed over (kept waiting) for later ones.
 */
export function freshPageQuery(group: ConsumerGroup, max: number): LogQuery {
  return { after: group.takenTo, limit: Math.max(max, GROUP_LIMITS.freshPageMin), ...(group.types === undefined ? {} : { types: group.types }) };
}
