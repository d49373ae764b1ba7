import type { EventLog } from '../event-log.ts';
import type { Clock, StoredEvent } from '../ports.ts';
import { holdRoomOf, logToEnd, readFreshPage } from './fresh-events.ts';
import { DEFAULT_GROUP_SETTINGS, GROUP_LIMITS } from './group-settings.ts';
import type { ConsumerGroup, GroupSettings, GroupStart } from './group-settings.ts';
import type { FreshEvents } from './fresh-events.ts';

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

/** A key asked for one group more than it may have. */
export class GroupLimitReached extends Error {
  constructor(readonly max: number) {
    super(`this key has ${max} consumer groups, the most it may have; delete one first`);
    this.name = 'GroupLimitReached';
  }
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

/**
 * The log's events past the group's cursor that a claim of `max` may lease, while it holds fewer unsettled
 * events than it may take ahead. The log is read through its one reader, committed events only in position
 * order, so a position past the cursor can never be overtaken by a later commit.
 */
async function freshEvents(ports: ConsumerGroupPorts, pending: PendingEvents, max: number): Promise<FreshEvents | undefined> {
  const holdRoom = holdRoomOf(pending.unsettled);
  if (holdRoom <= 0) return undefined;
  return { ...(await readFreshPage(logToEnd(ports.eventLog), pending.group, max)), holdRoom };
}

/** Fresh events a claim reads in its own transaction, the group's room to hold them counted there too. */
const IN_THE_CLAIM: FreshEvents = { after: -1 };

/**
 * Claims events for `consumer`: those waiting in the group, then fresh ones from the log past its
 * cursor; `seen` (default) records the consumer as seen now; `acks` are acked first, in the same
 * transaction (see `ClaimRequest.acks`). Undefined when there is no such group.
 */
export async function claimEvents(
  ports: ConsumerGroupPorts, ownerKeyId: string, name: string, consumer: string, max: number, seen = true, acks?: readonly string[],
): Promise<ClaimAnswer | undefined> {
  const group = ports.consumerGroups.group(ownerKeyId, name);
  const carried = acks !== undefined && acks.length > 0 ? acks : undefined;
  // A claim that writes anyway (marks its consumer seen, acks) reads the group and the log in its transaction
  // only: with several consumers, a page read before it would mostly be stale by then (another claim moved the cursor).
  if (seen || carried !== undefined) return group.claim({ consumer, max, now: ports.clock.now(), seen, fresh: IN_THE_CLAIM, acks: carried });
  const pending = await group.pending(ports.clock.now());
  if (!pending) return undefined;
  const fresh = await freshEvents(ports, pending, max);
  // Nothing could go: the claim's transaction (SQLite's writer) is not needed.
  if (!fresh?.events?.length && !pending.due) return { claims: [] };
  return group.claim({ consumer, max, now: ports.clock.now(), seen, fresh });
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
