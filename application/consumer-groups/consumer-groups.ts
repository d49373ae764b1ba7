import type { EventLog, LogQuery } from '../event-log.ts';
import type { Clock, StoredEvent } from '../ports.ts';

/** Where a new group begins: at the first event, after the log's current end, or after a position. */
export type GroupStart = 'beginning' | 'end' | number;

/** What a group's creator chooses; the same settings again find the same group. */
export interface GroupSettings {
  readonly ackTimeoutMs: number;
  readonly maxDeliveries: number;
  readonly start: GroupStart;
  /** Only events of these types; absent: every type. */
  readonly types?: readonly string[];
}

export const DEFAULT_GROUP_SETTINGS = { ackTimeoutMs: 30_000, maxDeliveries: 5, start: 'beginning' } as const satisfies GroupSettings;

/** The bounds on one key's groups and what they hold at once. */
export const GROUP_LIMITS = {
  groupsPerKey: 20,
  /** Room for four consumers each holding a full claim. */
  inFlightPerGroup: 4000,
  /** A full claim: a consumer acking each batch with its next claim holds one batch at a time. */
  inFlightPerConsumer: 1000,
  /** Events a claim hands out at most (and leases an ack, nack or extend names at most). */
  claimMax: 1000,
  /** The fewest events of the log past its cursor a claim reads, however few it asks for. */
  freshPageMin: 100,
  /** The longest a claim waits for events. */
  longestWaitMs: 30_000,
  /** Consumers a group shows at once (seen within its window, see `consumersWindowMs`): a claim by one more is told to wait. */
  consumersPerGroup: 1000,
  /** Claims waiting for events at once, of one key and from one client address (429 past either). */
  waitingClaimsPerKey: 100,
  waitingClaimsPerClient: 100,
  /**
   * Unsettled events a group holds at most (in flight, waiting to be retried, held back by their pet): past
   * it, the group reads no further into the log until some settle, so its rows stay bounded whatever the log holds.
   */
  takenAhead: 8000,
  /** Parked events a group holds at most: past it, it takes no more from the log until some are replayed (or it is deleted). */
  parkedPerGroup: 10_000,
  /** Parked events one replay step hands back at a time. */
  replayPage: 500,
} as const;

/** A consumer group: a key's named cursor set over the log. */
export interface ConsumerGroup extends GroupSettings {
  readonly ownerKeyId: string;
  readonly name: string;
  readonly createdAt: string;
  /** The group's cursor: every event of the log up to here has been taken in (handed out, waiting, parked, or acked). */
  readonly takenTo: number;
}

/** A group and how far its consumers have come. */
export interface GroupStatus {
  readonly group: ConsumerGroup;
  /** Every event at or below it is settled: acked or parked. */
  readonly checkpoint: number;
  /** Events taken in and not settled (waiting, or in flight). */
  readonly unsettled: number;
  readonly inFlight: number;
  readonly parked: number;
  /**
   * The consumers seen within the group's window (`consumersWindowMs`) or holding live leases, with their
   * live leases and when each last claimed or extended one.
   */
  readonly consumers: readonly { readonly consumer: string; readonly inFlight: number; readonly lastSeenAt: string }[];
}

/**
 * How long a consumer shows in its group after its last claim: the ack timeout, and at least the longest a
 * claim waits, so that a worker waiting for events does not vanish meanwhile.
 */
export function consumersWindowMs(group: Pick<GroupSettings, 'ackTimeoutMs'>): number {
  return Math.max(group.ackTimeoutMs, GROUP_LIMITS.longestWaitMs);
}

/** See `GroupHandle.pending`. */
export interface PendingEvents {
  readonly group: ConsumerGroup;
  readonly unsettled: number;
  readonly due: boolean;
}

/** An event handed to one consumer under a lease. */
export interface Claim {
  readonly lease: string;
  readonly position: number;
  /** 1 the first time it is handed out. */
  readonly deliveries: number;
  readonly leaseExpiresAt: string;
  readonly event: StoredEvent;
}

export interface ParkedEvent {
  readonly position: number;
  readonly reason: string;
  readonly deliveries: number;
  readonly parkedAt: string;
  readonly event: StoredEvent;
}

/** What a claim came to: the events handed out, or the cap that stopped it and when a lease frees up. */
export type ClaimOutcome =
  | { readonly claims: Claim[] }
  | { readonly full: 'group' | 'consumer' | 'consumers'; readonly retryAfterMs: number };

/** What a nack does with its events. */
export type NackThen = { readonly notBefore: Date } | { readonly park: true } | { readonly release: true };

/** Leases the caller named, split into those that were acted on and those no longer held. */
export interface LeaseOutcome {
  readonly done: readonly { readonly lease: string; readonly leaseExpiresAt?: string }[];
  readonly stale: readonly string[];
}

export type CreateOutcome = { readonly outcome: 'created' | 'exists'; readonly group: ConsumerGroup } | { readonly outcome: 'conflict' };

/** The key has no group by that name (another key's is not told apart). */
export class GroupNotFound extends Error {
  constructor(readonly group: string) {
    super(`no consumer group ${group}`);
    this.name = 'GroupNotFound';
  }
}

/** A group request the rules refuse (answered as a bad body). */
export class GroupRequestRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GroupRequestRefused';
  }
}

/** Whether `settings` are the group's own: creating it again with them finds it (types in any order). */
export function sameGroupSettings(group: ConsumerGroup, settings: GroupSettings): boolean {
  const types = (list: readonly string[] | undefined) => (list === undefined ? null : JSON.stringify([...list].sort()));
  return group.ackTimeoutMs === settings.ackTimeoutMs && group.maxDeliveries === settings.maxDeliveries
    && group.start === settings.start && types(group.types) === types(settings.types);
}

/** A key asked for one group more than it may have. */
export class GroupLimitReached extends Error {
  constructor(readonly max: number) {
    super(`this key has ${max} consumer groups, the most it may have; delete one first`);
    this.name = 'GroupLimitReached';
  }
}

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
  readonly holdRoom: number;
}

/** `FreshEvents` read. */
export type FreshPage = FreshEvents & { readonly events: readonly StoredEvent[] };

/** The page a claim walks: `fresh` as read while the cursor is still where it was read from, else the page after the cursor, read from `log`. */
export async function freshPage(fresh: FreshEvents, group: ConsumerGroup, max: number, log: Pick<EventLog, 'readLog' | 'end'>): Promise<FreshPage> {
  return fresh.events !== undefined && fresh.after === group.takenTo ? fresh as FreshPage : { ...fresh, ...(await readFreshPage(log, group, max)) };
}

/**
 * The group's page of the log past its cursor (`freshPageQuery`), up to the log's end read first: commits
 * become visible in position order, so a page shorter than its limit holds every event of the group's
 * types up to that end (`readTo`), and the claim that walks it moves the cursor there. A group that takes
 * types the log seldom holds thus reads the others once, not at every claim.
 */
export async function readFreshPage(log: Pick<EventLog, 'readLog' | 'end'>, group: ConsumerGroup, max: number): Promise<Pick<FreshPage, 'after' | 'events' | 'readTo'>> {
  const through = await log.end();
  const query = freshPageQuery(group, max);
  const events = await log.readLog({ ...query, through });
  return { after: group.takenTo, events, ...(events.length < query.limit ? { readTo: through } : {}) };
}

/** What a claim asks of its group (see `GroupHandle.claim`). */
export interface ClaimRequest {
  readonly consumer: string;
  readonly max: number;
  readonly now: Date;
  /** Records that `consumer` claimed now (a waiting claim's later looks do not). */
  readonly seen: boolean;
  readonly fresh?: FreshEvents | undefined;
  /**
   * The leases of the consumer's last batch: acked first, in the claim's own transaction (one commit a
   * batch for a busy worker), and acked even when the claim then meets a cap.
   */
  readonly acks?: readonly string[] | undefined;
}

/** What a claim came to, with what the acks it carried did (see `ClaimRequest.acks`). */
export type ClaimAnswer = ClaimOutcome & { readonly acked?: LeaseOutcome };

/**
 * One group of one key, and what its use cases do with it. Every change of its events is one
 * transaction that holds the group alone (across instances too), so no event is ever under two live
 * leases. Methods answer undefined (or nothing) when the key has no such group.
 */
export interface GroupHandle {
  get(): Promise<ConsumerGroup | undefined>;
  /**
   * What a claim needs first, in one read of the group's unsettled events (never its parked ones): the
   * group, its unsettled events, and whether one could be handed out at `now` but for per-pet order.
   */
  pending(now: Date): Promise<PendingEvents | undefined>;
  status(now: Date): Promise<GroupStatus | undefined>;
  delete(): Promise<boolean>;
  /**
   * Hands the consumer up to `max` events that can go now, oldest first, each the earliest unsettled of
   * its pet: those waiting (retries, expired leases, held back by their pet), then `fresh` ones while the
   * group's cursor is still where they were read from, moving the cursor past them. First parks the
   * events whose lease expired on their last delivery. When another claim moved the cursor since `fresh`
   * was read, the page after the cursor is read again in the claim's transaction: a claim never answers
   * nothing while events wait.
   */
  claim(request: ClaimRequest): Promise<ClaimAnswer | undefined>;
  ack(leases: readonly string[], now: Date): Promise<LeaseOutcome | undefined>;
  /**
   * Hands the events out again from `notBefore`, or parks them (`park`, or when their deliveries are spent);
   * `release` hands them back at once as if this delivery never happened (they were never tried).
   */
  nack(leases: readonly string[], now: Date, then: NackThen): Promise<LeaseOutcome | undefined>;
  extend(leases: readonly string[], now: Date): Promise<LeaseOutcome | undefined>;
  /** Parked events after `after`, by position, at most `limit`; an event whose last delivery's lease expired by `now` is one. */
  parked(after: number, limit: number, now: Date): Promise<ParkedEvent[]>;
  /** Hands parked events back (deliveries from 1 again): these positions, or up to `limit` of them after `after`; answers the positions handed back. */
  unpark(which: { readonly positions: readonly number[] } | { readonly after: number; readonly limit: number }, now: Date): Promise<number[]>;
}

/**
 * Consumer groups and their state, durable beside the log: a group keeps its cursor in the log and, as
 * its own rows, only the events that are not simply before it and settled (leased, waiting, parked).
 */
export interface ConsumerGroups {
  /** Creates it unless its owner has one by that name (`exists` with the same settings, `conflict` with others); `GroupLimitReached` past `maxPerOwner`. */
  create(ownerKeyId: string, name: string, settings: GroupSettings, takenTo: number, now: Date, maxPerOwner: number): Promise<CreateOutcome>;
  /** The key's groups by name; without a key, every key's (for the operator). */
  list(ownerKeyId?: string): Promise<ConsumerGroup[]>;
  totals(now: Date): Promise<GroupTotals>;
  /** The key's group by that name (whether it exists is for its methods to say). */
  group(ownerKeyId: string, name: string): GroupHandle;
}

/** Every group together, for metrics whose series do not grow with the groups. */
export interface GroupTotals {
  readonly groups: number;
  readonly inFlight: number;
  /** Taken in, not settled and not under a live lease: waiting to be claimed (or retried). */
  readonly waiting: number;
  readonly parked: number;
  /** The lowest checkpoint of any group (the log's head, lag 0, when there is none). */
  readonly lowestCheckpoint: number | undefined;
}

export interface ConsumerGroupPorts {
  readonly consumerGroups: ConsumerGroups;
  readonly eventLog: EventLog;
  readonly clock: Clock;
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
 * The log's events past the group's cursor that a claim of `max` may lease, while it holds fewer unsettled
 * events than it may take ahead; read now when `readNow`, else left for the claim's transaction to read.
 * The log is read through its one reader, committed events only in position order, so a position past the
 * cursor can never be overtaken by a later commit.
 */
async function freshEvents(ports: ConsumerGroupPorts, pending: PendingEvents, max: number, readNow: boolean): Promise<FreshEvents | undefined> {
  const holdRoom = GROUP_LIMITS.takenAhead - pending.unsettled;
  if (holdRoom <= 0) return undefined;
  const { group } = pending;
  if (!readNow) return { after: group.takenTo, holdRoom };
  return { ...(await readFreshPage(ports.eventLog, group, max)), holdRoom };
}

/**
 * The page of the log past the group's cursor that a claim of `max` reads: at least a full claim long, as
 * events whose pet holds them back are passed over (kept waiting) for later ones.
 */
export function freshPageQuery(group: ConsumerGroup, max: number): LogQuery {
  return { after: group.takenTo, limit: Math.max(max, GROUP_LIMITS.freshPageMin), ...(group.types === undefined ? {} : { types: group.types }) };
}

/**
 * Claims events for `consumer`: those waiting in the group, then fresh ones from the log past its
 * cursor; `seen` (default) records the consumer as seen now; `acks` are acked first, in the same
 * transaction (see `ClaimRequest.acks`). Undefined when there is no such group.
 */
export async function claimEvents(
  ports: ConsumerGroupPorts, ownerKeyId: string, name: string, consumer: string, max: number, seen = true, acks?: readonly string[],
): Promise<ClaimAnswer | undefined> {
  const group = ports.consumerGroups.group(ownerKeyId, name);
  const pending = await group.pending(ports.clock.now());
  if (!pending) return undefined;
  const carried = acks !== undefined && acks.length > 0 ? acks : undefined;
  // A claim that writes anyway (marks its consumer seen, acks) reads the log in its transaction: with several
  // consumers, a page read before it would mostly be stale by then (another claim moved the cursor).
  const writes = seen || carried !== undefined;
  const fresh = await freshEvents(ports, pending, max, !writes);
  // Nothing could go, nobody is to be marked seen and nothing acked: the claim's transaction (SQLite's writer) is not needed.
  if (!writes && !fresh?.events?.length && !pending.due) return { claims: [] };
  return group.claim({ consumer, max, now: ports.clock.now(), seen, fresh, acks: carried });
}

/** What a client asks a new group to be: each setting left out takes its default (`DEFAULT_GROUP_SETTINGS`). */
export interface NewGroup {
  readonly ackTimeoutMs?: number;
  readonly maxDeliveries?: number;
  readonly start?: GroupStart;
  readonly types?: readonly string[];
}

/**
 * Creates the group (or finds it with the same settings): its defaults filled in, and where it starts in
 * the log fixed now (`end`: the log's head at creation). A start past the log's head is refused: nothing
 * was committed there yet.
 */
export async function createGroup(ports: ConsumerGroupPorts, ownerKeyId: string, name: string, request: NewGroup, maxPerKey: number): Promise<CreateOutcome> {
  const settings: GroupSettings = {
    ackTimeoutMs: request.ackTimeoutMs ?? DEFAULT_GROUP_SETTINGS.ackTimeoutMs,
    maxDeliveries: request.maxDeliveries ?? DEFAULT_GROUP_SETTINGS.maxDeliveries,
    start: request.start ?? DEFAULT_GROUP_SETTINGS.start,
    ...(request.types ? { types: request.types } : {}),
  };
  const head = await ports.eventLog.end();
  if (typeof settings.start === 'number' && settings.start > head) {
    throw new GroupRequestRefused(`start ${settings.start} is past the end of the log (${head}): nothing was committed there yet`);
  }
  const takenTo = settings.start === 'beginning' ? 0 : settings.start === 'end' ? head : settings.start;
  return ports.consumerGroups.create(ownerKeyId, name, settings, takenTo, ports.clock.now(), maxPerKey);
}

/** Settles the events of `leases` still held; `GroupNotFound` when the key has no such group. */
export async function ackEvents(ports: ConsumerGroupPorts, ownerKeyId: string, name: string, leases: readonly string[]): Promise<LeaseOutcome> {
  return (await ports.consumerGroups.group(ownerKeyId, name).ack(leases, ports.clock.now())) ?? notFound(name);
}

/** What a nack asks: retry after `retryAfterMs` (default at once), `park`, or `release` (alone: back at once, untried). */
export interface NackRequest {
  readonly retryAfterMs?: number;
  readonly park?: boolean;
  readonly release?: boolean;
}

/** Hands the events of `leases` still held back, or parks them (see `NackRequest`); `GroupNotFound` when the key has no such group. */
export async function nackEvents(ports: ConsumerGroupPorts, ownerKeyId: string, name: string, leases: readonly string[], request: NackRequest): Promise<LeaseOutcome> {
  if (request.release && (request.park || request.retryAfterMs !== undefined)) {
    throw new GroupRequestRefused('release hands the events back at once: not with park or retryAfterMs');
  }
  const now = ports.clock.now();
  const then: NackThen = request.release ? { release: true } : request.park ? { park: true } : { notBefore: new Date(now.getTime() + (request.retryAfterMs ?? 0)) };
  return (await ports.consumerGroups.group(ownerKeyId, name).nack(leases, now, then)) ?? notFound(name);
}

/** Gives the leases still held a new expiry, `ackTimeoutMs` from now; `GroupNotFound` when the key has no such group. */
export async function extendLeases(ports: ConsumerGroupPorts, ownerKeyId: string, name: string, leases: readonly string[]): Promise<LeaseOutcome> {
  return (await ports.consumerGroups.group(ownerKeyId, name).extend(leases, ports.clock.now())) ?? notFound(name);
}

function notFound(name: string): never {
  throw new GroupNotFound(name);
}

/** Hands every parked event (or those at `positions`) back, a page at a time: never all of them in memory. Answers how many. */
export async function replayParked(ports: ConsumerGroupPorts, ownerKeyId: string, name: string, positions?: readonly number[]): Promise<number> {
  const group = ports.consumerGroups.group(ownerKeyId, name);
  if (positions !== undefined) return (await group.unpark({ positions }, ports.clock.now())).length;
  let count = 0;
  let after = 0;
  for (;;) {
    const page = await group.unpark({ after, limit: GROUP_LIMITS.replayPage }, ports.clock.now());
    count += page.length;
    if (page.length < GROUP_LIMITS.replayPage) return count;
    after = page.at(-1)!;
  }
}
