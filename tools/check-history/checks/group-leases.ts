import { consumerGroups, leaseEndSentBefore } from '../consumer-groups.ts';
import type { Check, Finding } from '../model.ts';

/**
 * `group-double-lease`: an event handed out while an earlier lease on it was certainly live: that lease's
 * claim was answered before this claim was sent, this claim was answered before the lease could have
 * expired (its claim sent + ackTimeoutMs), and no ack nor nack of that lease was sent before this claim
 * was answered (an ack that settled it is `group-acked-redelivered`'s; a nack hands the event back, or
 * parks it until a replay hands it out again).
 */
export const groupDoubleLease: Check = (model) => {
  const findings: Finding[] = [];
  for (const group of consumerGroups(model)) {
    const ackTimeoutMs = group.created?.ackTimeoutMs;
    if (ackTimeoutMs === undefined) continue;
    for (const [position, handOuts] of group.handOuts) {
      for (const later of handOuts) {
        const holder = handOuts.find(({ claim, entry }) =>
          claim.completedAt <= later.claim.invokedAt && later.claim.completedAt < claim.invokedAt + ackTimeoutMs
          && !leaseEndSentBefore(group, position, entry.lease, later.claim.completedAt));
        if (!holder) continue;
        findings.push({
          anomaly: 'group-double-lease', ops: [holder.claim.index, later.claim.index], positions: [position],
          why: `group ${group.name}: position ${position} handed to ${later.claim.consumer} (lease ${later.entry.lease}) while ${holder.claim.consumer}'s lease ${holder.entry.lease} on it was live`,
        });
      }
    }
  }
  return findings;
};

/**
 * `group-acked-redelivered`: an event handed out by a claim sent after an ack of it was answered acked
 * (an acked event is settled for good: a replay hands out parked events only, and an event parked and
 * replayed was never acked).
 */
export const groupAckedRedelivered: Check = (model) => {
  const findings: Finding[] = [];
  for (const group of consumerGroups(model)) {
    for (const [position, acks] of group.acks) {
      const settled = acks.filter((ack) => ack.result === 'acked');
      if (settled.length === 0) continue;
      const firstAnswered = settled.reduce((first, ack) => (ack.ack.completedAt < first.ack.completedAt ? ack : first));
      for (const { claim, entry } of group.handOuts.get(position) ?? []) {
        if (claim.invokedAt <= firstAnswered.ack.completedAt) continue;
        findings.push({
          anomaly: 'group-acked-redelivered', ops: [firstAnswered.ack.index, claim.index], positions: [position],
          why: `group ${group.name}: position ${position} handed to ${claim.consumer} (lease ${entry.lease}) after its ack of lease ${firstAnswered.lease} was answered acked`,
        });
      }
    }
  }
  return findings;
};
