import { isDeepStrictEqual } from 'node:util';
import { consumerGroups, maySettle, parkSentBefore } from '../consumer-groups.ts';
import type { GroupView } from '../consumer-groups.ts';
import type { Check, Finding, HistoryModel } from '../model.ts';
import type { GroupReadOp } from '../operations.ts';
import { positionOf } from '../pet-log.ts';
import type { LogEvent } from '../pet-log.ts';

/** How many positions a finding lists; its why says how many there were. */
const LISTED = 20;

/** The group's last state read that reported its parked positions, if any. */
const finalRead = (group: GroupView): GroupReadOp | undefined => group.reads.filter((read) => read.ok?.parked !== undefined).at(-1);

/** The log's events the group takes, at or below `checkpoint`, and not parked. */
function settledBy(model: HistoryModel, group: GroupView, checkpoint: number): LogEvent[] {
  return model.log.events.filter((event) => event.position <= checkpoint && group.takes(event) === true && !group.parked.has(event.position));
}

/**
 * `group-skip`: an event of the log the group takes, at or below its final checkpoint (the last state
 * read with its parked positions), that no ack may have settled (none answered acked, none unanswered)
 * and that is not parked.
 */
export const groupSkip: Check = (model) => {
  const findings: Finding[] = [];
  for (const group of consumerGroups(model)) {
    const read = finalRead(group);
    if (!read?.ok) continue;
    const skipped = settledBy(model, group, read.ok.checkpoint).filter((event) => !(group.acks.get(event.position) ?? []).some(maySettle));
    if (skipped.length === 0) continue;
    findings.push({
      anomaly: 'group-skip', ops: [read.index, model.logOp.completion!.index], positions: skipped.slice(0, LISTED).map((event) => event.position),
      why: `group ${group.name}: checkpoint ${read.ok.checkpoint}, yet ${skipped.length} event(s) at or below it were never acked nor parked`,
    });
  }
  return findings;
};

/** `group-double-ack`: one position settled by two acks, each answered with its lease acked (not stale). */
export const groupDoubleAck: Check = (model) => {
  const findings: Finding[] = [];
  for (const group of consumerGroups(model)) {
    for (const [position, acks] of group.acks) {
      const acked = acks.filter((ack) => ack.result === 'acked');
      if (acked.length < 2) continue;
      findings.push({
        anomaly: 'group-double-ack', ops: acked.map((ack) => ack.ack.index), positions: [position],
        why: `group ${group.name}: position ${position} acked ${acked.length} times (leases ${acked.map((ack) => ack.lease).join(', ')})`,
      });
    }
  }
  return findings;
};

/**
 * `group-order`: an event handed out while an earlier event of the same pet in the group was certainly
 * unsettled: handed out in the same claim, or by a claim answered before this one was sent whose lease
 * could not have expired before this one was answered (sent + ackTimeoutMs), and no ack nor park of that
 * position sent before this one was answered (a parked event holds its pet's later ones back no more).
 */
export const groupOrder: Check = (model) => {
  const findings: Finding[] = [];
  for (const group of consumerGroups(model)) {
    const ackTimeoutMs = group.created?.ackTimeoutMs;
    if (ackTimeoutMs === undefined) continue;
    for (const claim of group.claims) {
      for (const entry of claim.ok?.claims ?? []) {
        const later = model.log.byPosition.get(entry.position);
        if (!later) continue;
        for (const earlier of model.log.pets.get(later.petId) ?? []) {
          if (earlier.position >= later.position) break;
          const acked = (group.acks.get(earlier.position) ?? []).some((ack) => ack.result !== 'refused' && ack.ack.invokedAt < claim.completedAt);
          if (acked || parkSentBefore(group, earlier.position, claim.completedAt)) continue;
          const holder = (group.handOuts.get(earlier.position) ?? []).find(({ claim: other }) =>
            other === claim || (other.completedAt <= claim.invokedAt && claim.completedAt < other.invokedAt + ackTimeoutMs));
          if (!holder) continue;
          findings.push({
            anomaly: 'group-order', ops: holder.claim === claim ? [claim.index] : [holder.claim.index, claim.index], positions: [earlier.position, later.position],
            why: `group ${group.name}: pet ${later.petId}'s position ${later.position} handed out while its position ${earlier.position} was ${holder.claim === claim ? 'handed out in the same claim' : 'under a live lease'}`,
          });
        }
      }
    }
  }
  return findings;
};

/** `group-mismatch`: a claimed event unlike the log's at its position, or whose position is not its id. */
export const groupMismatch: Check = (model) => {
  const findings: Finding[] = [];
  const logIndex = model.logOp.completion!.index;
  for (const group of consumerGroups(model)) {
    for (const claim of group.claims) {
      for (const entry of claim.ok?.claims ?? []) {
        const logged = model.log.served.get(entry.position);
        const why = positionOf(entry.event) !== entry.position ? `an event whose id is ${JSON.stringify(entry.event.id)}`
          : !logged ? 'an event the log does not hold'
          : !isDeepStrictEqual(logged, entry.event) ? 'an event unlike the log\'s'
          : undefined;
        if (why) findings.push({ anomaly: 'group-mismatch', ops: [claim.index, logIndex], positions: [entry.position], why: `group ${group.name}: ${claim.consumer} claimed at position ${entry.position} ${why}` });
      }
    }
  }
  return findings;
};

/**
 * `group-checkpoint`: a state read after a drain that reported done (`drained`) whose checkpoint is
 * below its head; or a reported checkpoint past an event the group takes that no ack sent before the
 * read was answered may have settled, and that is not parked nor sent to be parked before the read was
 * answered (a replay hands it out again, and the checkpoint moves back: its later ack is no anomaly;
 * events never acked at all are `group-skip`'s).
 */
export const groupCheckpoint: Check = (model) => {
  const findings: Finding[] = [];
  for (const group of consumerGroups(model)) {
    for (const read of group.reads) {
      if (!read.ok) continue;
      if (read.drained && read.ok.checkpoint < read.ok.head) {
        findings.push({ anomaly: 'group-checkpoint', ops: [read.index], why: `group ${group.name}: drained, yet its checkpoint ${read.ok.checkpoint} is below the head ${read.ok.head}` });
      }
      const ahead = settledBy(model, group, read.ok.checkpoint).filter((event) => {
        const settling = (group.acks.get(event.position) ?? []).filter(maySettle);
        return settling.length > 0 && settling.every((ack) => ack.ack.invokedAt > read.completedAt) && !parkSentBefore(group, event.position, read.completedAt);
      });
      if (ahead.length === 0) continue;
      const acks = new Set(ahead.flatMap((event) => group.acks.get(event.position)!.filter(maySettle).map((ack) => ack.ack.index)));
      findings.push({
        anomaly: 'group-checkpoint', ops: [read.index, ...[...acks].slice(0, LISTED)], positions: ahead.slice(0, LISTED).map((event) => event.position),
        why: `group ${group.name}: checkpoint ${read.ok.checkpoint} passes ${ahead.length} event(s) acked only after it was read`,
      });
    }
  }
  return findings;
};
