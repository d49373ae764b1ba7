// A consumer group's settings, the bounds on what it holds, and the group as its store keeps it.
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

/**
 * How long a consumer shows in its group after its last claim: the ack timeout, and at least the longest a
 * claim waits, so that a worker waiting for events does not vanish meanwhile.
 */
export function consumersWindowMs(group: Pick<GroupSettings, 'ackTimeoutMs'>): number {
  return Math.max(group.ackTimeoutMs, GROUP_LIMITS.longestWaitMs);
}

/** Whether `settings` are the group's own: creating it again with them finds it (types in any order). */
export function sameGroupSettings(group: ConsumerGroup, settings: GroupSettings): boolean {
  const types = (list: readonly string[] | undefined) => (list === undefined ? null : JSON.stringify([...list].sort()));
  return group.ackTimeoutMs === settings.ackTimeoutMs && group.maxDeliveries === settings.maxDeliveries
    && group.start === settings.start && types(group.types) === types(settings.types);
}
