import { claimPage, consumersWindowMs, cursorPastOtherTypes, freshPage, GROUP_LIMITS, GroupLimitReached, logToEnd, sameGroupSettings, walkFresh } from '../../../application/index.ts';
import type { ClaimOutcome, ConsumerGroup, ConsumerGroups, EventLog, FreshPage, GroupHandle, LeaseOutcome, StoredEvent } from '../../../application/index.ts';
import { newLeaseToken } from '../lease-tokens.ts';

/** An event of a group that is not simply before its cursor and acked: leased, waiting, or parked. */
interface EventRow {
  readonly position: number;
  readonly streamId: string;
  state: 'ready' | 'leased' | 'parked';
  deliveries: number;
  notBefore: string | null;
  lease: string | null;
  consumer: string | null;
  leaseExpiresAt: string | null;
  reason: string | null;
  parkedAt: string | null;
  readonly event: StoredEvent;
}

interface GroupState {
  group: ConsumerGroup;
  readonly events: Map<number, EventRow>;
  /** Each consumer's last claim (ISO time). */
  readonly seen: Map<string, string>;
}

/** Groups of every key, shared by the handles `createInMemoryConsumerGroups` makes over them (as two instances share a database). */
export type InMemoryGroupState = Map<string, GroupState>;

export function createInMemoryGroupState(): InMemoryGroupState {
  return new Map();
}

/**
 * Consumer groups in memory, by the same rules as the SQL stores (the rule suite runs against both): each
 * operation runs to its end without awaiting anything, which is what holding the group alone means here.
 * A group keeps its cursor and, as rows, only the events that are leased, waiting or parked.
 * Times are compared as the ISO texts the SQL stores compare.
 */
export function createInMemoryConsumerGroups(
  eventLog: Pick<EventLog, 'readLog' | 'end'>,
  state: InMemoryGroupState = createInMemoryGroupState(),
  limits: {
    readonly inFlightPerGroup: number; readonly inFlightPerConsumer: number; readonly consumersPerGroup?: number; readonly parkedPerGroup?: number;
  } = GROUP_LIMITS,
): ConsumerGroups {
  const keyOf = (ownerKeyId: string, name: string) => `${ownerKeyId}\u0000${name}`;
  const find = (ownerKeyId: string, name: string) => state.get(keyOf(ownerKeyId, name));
  const rows = (group: GroupState) => [...group.events.values()].sort((a, b) => a.position - b.position);
  const spent = (group: GroupState, row: EventRow, at: string) => row.state === 'leased' && row.leaseExpiresAt! < at && row.deliveries >= group.group.maxDeliveries;
  const isDue = (row: EventRow, at: string) => (row.state === 'ready' && (row.notBefore === null || row.notBefore <= at)) || (row.state === 'leased' && row.leaseExpiresAt! < at);
  const unsettled = (row: EventRow) => row.state === 'ready' || row.state === 'leased';
  const live = (row: EventRow, at: string) => row.state === 'leased' && row.leaseExpiresAt! >= at;
  const clearLease = (row: EventRow) => {
    row.lease = null;
    row.consumer = null;
    row.leaseExpiresAt = null;
  };
  const parkSpent = (group: GroupState, at: string) => {
    for (const row of group.events.values()) {
      if (!spent(group, row, at)) continue;
      row.state = 'parked';
      row.reason = `lease expired on delivery ${row.deliveries}`;
      row.parkedAt = row.leaseExpiresAt;
      clearLease(row);
    }
  };
  /** The rows of `leases` live at `now`. */
  const held = (group: GroupState, leases: readonly string[], now: Date) => {
    const at = now.toISOString();
    const wanted = new Set(leases);
    return rows(group).filter((row) => live(row, at) && wanted.has(row.lease!));
  };
  const outcome = (leases: readonly string[], done: LeaseOutcome['done']): LeaseOutcome => {
    const kept = new Set(done.map((entry) => entry.lease));
    return { done, stale: [...new Set(leases)].filter((lease) => !kept.has(lease)) };
  };
  const checkpointOf = (group: GroupState, first: number) => Math.min(group.group.takenTo, first - 1);

  /** Settles the events of `leases` live at `now`. */
  const ackHeld = (group: GroupState, leases: readonly string[], now: Date): LeaseOutcome => {
    const done = held(group, leases, now);
    for (const row of done) group.events.delete(row.position);
    return outcome(leases, done.map((row) => ({ lease: row.lease! })));
  };
  /** A claim's work on its group (see `GroupHandle.claim`), run to its end without awaiting anything. */
  const claimHeld = (group: GroupState, consumer: string, max: number, now: Date, seen: boolean, fresh: FreshPage | undefined): ClaimOutcome => {
    const at = now.toISOString();
    if (seen && !group.seen.has(consumer)) {
      const since = new Date(now.getTime() - consumersWindowMs(group.group)).toISOString();
      for (const [other, lastSeenAt] of group.seen) if (lastSeenAt < since) group.seen.delete(other);
      if (group.seen.size >= (limits.consumersPerGroup ?? GROUP_LIMITS.consumersPerGroup)) return { full: 'consumers', retryAfterMs: consumersWindowMs(group.group) };
    }
    if (seen) group.seen.set(consumer, at);
    parkSpent(group, at);
    const leases = [...group.events.values()].filter((row) => live(row, at));
    const mine = leases.filter((row) => row.consumer === consumer);
    const freeIn = (held: readonly EventRow[]) => Math.max(1, Math.min(...held.map((row) => Date.parse(row.leaseExpiresAt!))) - now.getTime());
    if (leases.length >= limits.inFlightPerGroup) return { full: 'group', retryAfterMs: freeIn(leases) };
    if (mine.length >= limits.inFlightPerConsumer) return { full: 'consumer', retryAfterMs: freeIn(mine) };
    const room = Math.min(max, limits.inFlightPerGroup - leases.length, limits.inFlightPerConsumer - mine.length);
    const ordered = rows(group);
    // Per-pet order: only the earliest unsettled event of its pet.
    const earliestOpen = new Map<string, number>();
    for (const row of ordered) if (unsettled(row) && !earliestOpen.has(row.streamId)) earliestOpen.set(row.streamId, row.position);
    const due = ordered.filter((row) => isDue(row, at) && earliestOpen.get(row.streamId) === row.position).slice(0, room);
    const token = newLeaseToken();
    const leaseExpiresAt = new Date(now.getTime() + group.group.ackTimeoutMs).toISOString();
    const lease = (row: EventRow) => {
      Object.assign(row, { state: 'leased', lease: `${token}.${row.position}`, consumer, leaseExpiresAt, notBefore: null, deliveries: row.deliveries + 1 });
      return { lease: row.lease!, position: row.position, deliveries: row.deliveries, leaseExpiresAt, event: row.event };
    };
    const claims = due.map(lease);
    const parked = () => [...group.events.values()].filter((row) => row.state === 'parked').length;
    if (fresh && fresh.events.length > 0 && claims.length < room && parked() < (limits.parkedPerGroup ?? GROUP_LIMITS.parkedPerGroup)) {
      const walk = walkFresh(fresh, room - claims.length, new Set(ordered.filter(unsettled).map((row) => row.streamId)));
      for (const [events, state] of [[walk.hold, 'ready'], [walk.lease, 'leased']] as const) {
        for (const event of events) {
          const row: EventRow = {
            position: event.position, streamId: event.streamId, state: 'ready', deliveries: 0, notBefore: null, lease: null, consumer: null,
            leaseExpiresAt: null, reason: null, parkedAt: null, event,
          };
          group.events.set(event.position, row);
          if (state === 'leased') claims.push(lease(row));
        }
      }
      group.group = { ...group.group, takenTo: walk.cursor };
    } else {
      const cursor = cursorPastOtherTypes(fresh, group.group.takenTo);
      if (cursor !== undefined) group.group = { ...group.group, takenTo: cursor };
    }
    return { claims };
  };

  return {
    async create(ownerKeyId, name, settings, takenTo, now, maxPerOwner) {
      const existing = find(ownerKeyId, name);
      if (existing) return sameGroupSettings(existing.group, settings) ? { outcome: 'exists', group: existing.group } : { outcome: 'conflict' };
      const owned = [...state.values()].filter((group) => group.group.ownerKeyId === ownerKeyId).length;
      if (owned >= maxPerOwner) throw new GroupLimitReached(maxPerOwner);
      const group: ConsumerGroup = {
        ownerKeyId, name, ackTimeoutMs: settings.ackTimeoutMs, maxDeliveries: settings.maxDeliveries, start: settings.start,
        ...(settings.types === undefined ? {} : { types: [...settings.types] }), createdAt: now.toISOString(), takenTo,
      };
      state.set(keyOf(ownerKeyId, name), { group, events: new Map(), seen: new Map() });
      return { outcome: 'created', group };
    },

    async list(ownerKeyId) {
      return [...state.values()].map((group) => group.group).filter((group) => ownerKeyId === undefined || group.ownerKeyId === ownerKeyId)
        .sort((a, b) => (a.ownerKeyId === b.ownerKeyId ? (a.name < b.name ? -1 : 1) : a.ownerKeyId < b.ownerKeyId ? -1 : 1));
    },

    async totals(now) {
      const at = now.toISOString();
      let inFlight = 0;
      let open = 0;
      let parked = 0;
      const checkpoints: number[] = [];
      for (const group of state.values()) {
        let first = Infinity;
        for (const row of group.events.values()) {
          if (row.state === 'parked') parked += 1;
          else {
            open += 1;
            first = Math.min(first, row.position);
            if (live(row, at)) inFlight += 1;
          }
        }
        checkpoints.push(checkpointOf(group, first));
      }
      return { groups: state.size, inFlight, waiting: open - inFlight, parked, lowestCheckpoint: checkpoints.length === 0 ? undefined : Math.min(...checkpoints) };
    },

    group(ownerKeyId, name): GroupHandle {
      return {
        async get() {
          return find(ownerKeyId, name)?.group;
        },

        async pending(now) {
          const group = find(ownerKeyId, name);
          if (!group) return undefined;
          const at = now.toISOString();
          const open = [...group.events.values()].filter(unsettled);
          return { group: group.group, unsettled: open.length, due: open.some((row) => isDue(row, at)) };
        },

        async status(now) {
          const group = find(ownerKeyId, name);
          if (!group) return undefined;
          const at = now.toISOString();
          let first = Infinity;
          let open = 0;
          let parked = 0;
          let inFlight = 0;
          const leased = new Map<string, { count: number; latest: string }>();
          for (const row of group.events.values()) {
            if (row.state === 'parked' || spent(group, row, at)) {
              parked += 1;
              continue;
            }
            open += 1;
            first = Math.min(first, row.position);
            if (!live(row, at)) continue;
            inFlight += 1;
            const mine = leased.get(row.consumer!) ?? { count: 0, latest: '' };
            leased.set(row.consumer!, { count: mine.count + 1, latest: row.leaseExpiresAt! > mine.latest ? row.leaseExpiresAt! : mine.latest });
          }
          const since = new Date(now.getTime() - consumersWindowMs(group.group)).toISOString();
          const consumers = new Map<string, { consumer: string; inFlight: number; lastSeenAt: string }>();
          for (const [consumer, lastSeenAt] of group.seen) if (lastSeenAt >= since) consumers.set(consumer, { consumer, inFlight: 0, lastSeenAt });
          for (const [consumer, { count, latest }] of leased) {
            const leasedAt = new Date(Date.parse(latest) - group.group.ackTimeoutMs).toISOString();
            const known = consumers.get(consumer);
            consumers.set(consumer, { consumer, inFlight: count, lastSeenAt: known && known.lastSeenAt > leasedAt ? known.lastSeenAt : leasedAt });
          }
          return {
            group: group.group, checkpoint: checkpointOf(group, first), unsettled: open, inFlight, parked,
            consumers: [...consumers.values()].sort((a, b) => (a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : 0)),
          };
        },

        async delete() {
          return state.delete(keyOf(ownerKeyId, name));
        },

        async claim({ consumer, max, now, seen, fresh: read, acks }) {
          const group = find(ownerKeyId, name);
          if (!group) return undefined;
          // Another claim moved the cursor since `read` was read: the page after it, read before anything here changes.
          let fresh = await claimPage(read, group.group, max, logToEnd(eventLog), () => [...group.events.values()].filter(unsettled).length);
          while (fresh && fresh.after !== group.group.takenTo) fresh = await freshPage(fresh, group.group, max, logToEnd(eventLog));
          // The acks it carries first, so that the caps count the room they free; kept whatever the claim meets.
          const acked = acks === undefined ? undefined : ackHeld(group, acks, now);
          const claimed = claimHeld(group, consumer, max, now, seen, fresh);
          return acked === undefined ? claimed : { ...claimed, acked };
        },

        async ack(leases, now) {
          const group = find(ownerKeyId, name);
          return group && ackHeld(group, leases, now);
        },

        async nack(leases, now, then) {
          const group = find(ownerKeyId, name);
          if (!group) return undefined;
          const done = held(group, leases, now);
          const answered = done.map((row) => ({ lease: row.lease! }));
          const at = now.toISOString();
          for (const row of done) {
            if ('release' in then) {
              Object.assign(row, { state: 'ready', notBefore: null, deliveries: row.deliveries - 1 });
            } else if ('park' in then || row.deliveries >= group.group.maxDeliveries) {
              const reason = 'park' in then ? `parked by a nack on delivery ${row.deliveries}` : `nacked on delivery ${row.deliveries} of ${group.group.maxDeliveries}`;
              Object.assign(row, { state: 'parked', reason, parkedAt: at });
            } else {
              Object.assign(row, { state: 'ready', notBefore: 'notBefore' in then ? then.notBefore.toISOString() : at });
            }
            clearLease(row);
          }
          return outcome(leases, answered);
        },

        async extend(leases, now) {
          const group = find(ownerKeyId, name);
          if (!group) return undefined;
          const done = held(group, leases, now);
          const leaseExpiresAt = new Date(now.getTime() + group.group.ackTimeoutMs).toISOString();
          for (const row of done) row.leaseExpiresAt = leaseExpiresAt;
          return outcome(leases, done.map((row) => ({ lease: row.lease!, leaseExpiresAt })));
        },

        async parked(after, limit, now) {
          const group = find(ownerKeyId, name);
          if (!group) return [];
          const at = now.toISOString();
          return rows(group)
            .filter((row) => (row.state === 'parked' || spent(group, row, at)) && row.position > after)
            .slice(0, limit)
            .map((row) => ({
              position: row.position, reason: row.state === 'parked' ? (row.reason ?? '') : `lease expired on delivery ${row.deliveries}`, deliveries: row.deliveries,
              parkedAt: (row.state === 'parked' ? row.parkedAt : row.leaseExpiresAt) ?? '', event: row.event,
            }));
        },

        async unpark(which, now) {
          const group = find(ownerKeyId, name);
          if (!group) return [];
          parkSpent(group, now.toISOString());
          const parked = rows(group).filter((row) => row.state === 'parked');
          const chosen = 'positions' in which
            ? parked.filter((row) => which.positions.includes(row.position))
            : parked.filter((row) => row.position > which.after).slice(0, which.limit);
          for (const row of chosen) Object.assign(row, { state: 'ready', deliveries: 0, reason: null, parkedAt: null, notBefore: null });
          return chosen.map((row) => row.position);
        },
      };
    },
  };
}
