import { groupBy } from './group-by.ts';
import type { HistoryModel } from './model.ts';
import { ackOp, claimOp, groupCreateOp, groupReadOp, nackOp } from './operations.ts';
import type { AckOp, Claim, ClaimOp, GroupCreateOp, GroupReadOp, NackOp } from './operations.ts';
import type { LogEvent } from './pet-log.ts';

/** What an ack did to one of its leases: settled it, found it no longer held, unknown (no answer), or refused. */
export type AckResult = 'acked' | 'stale' | 'unknown' | 'refused';

export interface HandOut {
  readonly claim: ClaimOp;
  readonly entry: Claim;
}

export interface LeaseAck {
  readonly ack: AckOp;
  readonly lease: string;
  readonly result: AckResult;
}

export interface LeaseNack {
  readonly nack: NackOp;
  readonly lease: string;
}

/** One consumer group's operations, read together. */
export interface GroupView {
  readonly name: string;
  readonly created: GroupCreateOp | undefined;
  readonly claims: readonly ClaimOp[];
  readonly reads: readonly GroupReadOp[];
  /** Each position's hand-outs, in the order of their claims. */
  readonly handOuts: ReadonlyMap<number, readonly HandOut[]>;
  /** Each position's acks of its leases (of a lease no claim handed out: not known). */
  readonly acks: ReadonlyMap<number, readonly LeaseAck[]>;
  /**
   * Each position's nacks of its leases that may have taken effect (not refused). A nack ends its lease;
   * with `park` it parks the event, which only a replay hands out again.
   */
  readonly nacks: ReadonlyMap<number, readonly LeaseNack[]>;
  /** Parked positions, as any read with them reported. */
  readonly parked: ReadonlySet<number>;
  /** Whether the log's event is one the group takes: above where it started, of its types; undefined when no creation says. */
  takes(event: LogEvent): boolean | undefined;
}

const views = new WeakMap<HistoryModel, readonly GroupView[]>();

/** The history's consumer groups, by the name their operations give; read once a model. */
export function consumerGroups(model: HistoryModel): readonly GroupView[] {
  let found = views.get(model);
  if (!found) {
    found = readGroups(model);
    views.set(model, found);
  }
  return found;
}

function readGroups(model: HistoryModel): GroupView[] {
  const creates = groupBy(model.of('group-create').map(groupCreateOp), (op) => op.group);
  const claims = groupBy(model.of('claim').map(claimOp), (op) => op.group);
  const acks = groupBy(model.of('ack').map(ackOp), (op) => op.group);
  const nacks = groupBy(model.of('nack').map(nackOp), (op) => op.group);
  const reads = groupBy(model.of('group').map(groupReadOp), (op) => op.group);
  const names = new Set([...creates.keys(), ...claims.keys(), ...acks.keys(), ...nacks.keys(), ...reads.keys()]);
  return [...names].map((name) => {
    const created = (creates.get(name) ?? []).find((op) => op.ok) ?? creates.get(name)?.[0];
    const ownClaims = claims.get(name) ?? [];
    const ownReads = reads.get(name) ?? [];
    const handOuts = new Map<number, HandOut[]>();
    const positionOfLease = new Map<string, number>();
    for (const claim of ownClaims) {
      for (const entry of claim.ok?.claims ?? []) {
        positionOfLease.set(entry.lease, entry.position);
        push(handOuts, entry.position, { claim, entry });
      }
    }
    const leaseAcks = new Map<number, LeaseAck[]>();
    for (const ack of acks.get(name) ?? []) {
      const stale = new Set(ack.ok?.stale ?? []);
      for (const lease of ack.leases) {
        const position = positionOfLease.get(lease);
        if (position === undefined) continue;
        const result: AckResult = ack.ok ? (stale.has(lease) ? 'stale' : 'acked') : ack.outcome === 'fail' ? 'refused' : 'unknown';
        push(leaseAcks, position, { ack, lease, result });
      }
    }
    const leaseNacks = new Map<number, LeaseNack[]>();
    for (const nack of nacks.get(name) ?? []) {
      if (nack.outcome === 'fail') continue;
      for (const lease of nack.leases) {
        const position = positionOfLease.get(lease);
        if (position !== undefined) push(leaseNacks, position, { nack, lease });
      }
    }
    const parked = new Set(ownReads.flatMap((read) => read.ok?.parked ?? []));
    const floor = created?.ok?.checkpoint;
    const types = created?.types;
    return {
      name, created, claims: ownClaims, reads: ownReads, handOuts, acks: leaseAcks, nacks: leaseNacks, parked,
      takes: (event: LogEvent) => (floor === undefined ? undefined : event.position > floor && (!types || types.includes(String(event.served.type)))),
    };
  });
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Whether an ack may have settled the position: it was answered acked, or never answered. */
export const maySettle = (ack: LeaseAck) => ack.result === 'acked' || ack.result === 'unknown';

/** Whether an ack (not refused) or a nack of `lease` on `position` was sent before `time`: the lease may have ended by then. */
export const leaseEndSentBefore = (group: GroupView, position: number, lease: string, time: number): boolean =>
  (group.acks.get(position) ?? []).some((ack) => ack.lease === lease && ack.result !== 'refused' && ack.ack.invokedAt < time)
  || (group.nacks.get(position) ?? []).some((nack) => nack.lease === lease && nack.nack.invokedAt < time);

/** Whether a nack parking `position` was sent before `time`: from then on the checkpoint may pass it unacked. */
export const parkSentBefore = (group: GroupView, position: number, time: number): boolean =>
  (group.nacks.get(position) ?? []).some((nack) => nack.nack.park && nack.nack.invokedAt < time);
