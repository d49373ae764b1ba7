import { isDeepStrictEqual } from 'node:util';
import type { Check, Finding } from '../model.ts';
import { feedOp } from '../operations.ts';
import { positionOf } from '../pet-log.ts';
import { groupBy } from '../group-by.ts';

/** How many missed positions a finding lists; the count says how many there were. */
const LISTED = 20;

/**
 * The feed's promises, per consumer (a process of `feed` operations, each after the last position it
 * received): `feed-skip` (an event of the log between `after` and the last one received, not received),
 * `feed-duplicate` (one position twice, across reconnects too), `feed-reorder` (a position below one
 * received before it, or at or below `after`), `feed-mismatch` (an event unlike the log's at its position).
 */
export const feedOrder: Check = (model) => {
  const findings: Finding[] = [];
  const logIndex = model.logOp.completion!.index;
  const positions = [...model.log.served.keys()].sort((a, b) => a - b);
  for (const [consumer, ops] of groupBy(model.of('feed').map(feedOp), (op) => op.op.process)) {
    const seen = new Map<number, number>();
    let highest = 0;
    for (const op of ops) {
      const receivedHere = new Set<number>();
      let lastHere = op.after;
      for (const event of op.events) {
        const position = positionOf(event);
        if (position === undefined) {
          findings.push({ anomaly: 'feed-mismatch', ops: [op.index], why: `${consumer} received an event without a position: ${JSON.stringify(event).slice(0, 200)}` });
          continue;
        }
        const logged = model.log.served.get(position);
        if (!logged || !isDeepStrictEqual(logged, event)) {
          findings.push({ anomaly: 'feed-mismatch', ops: [op.index, logIndex], positions: [position], why: `${consumer} received at position ${position} ${logged ? 'an event unlike the log\'s' : 'an event the log does not hold'}` });
        }
        const before = seen.get(position);
        receivedHere.add(position);
        if (before !== undefined) {
          findings.push({ anomaly: 'feed-duplicate', ops: before === op.index ? [op.index] : [before, op.index], positions: [position], why: `${consumer} received position ${position} twice` });
          continue;
        }
        if (position <= op.after || position < highest) {
          findings.push({ anomaly: 'feed-reorder', ops: [op.index], positions: [position], why: `${consumer} received position ${position} after ${Math.max(highest, op.after)}` });
        }
        seen.set(position, op.index);
        if (position > lastHere) lastHere = position;
        if (position > highest) highest = position;
      }
      const missed = positionsBetween(positions, op.after, lastHere).filter((position) => !receivedHere.has(position));
      if (missed.length > 0) {
        findings.push({
          anomaly: 'feed-skip', ops: [op.index, logIndex], positions: missed.slice(0, LISTED),
          why: `${consumer} read after ${op.after} up to ${lastHere} and missed ${missed.length} event(s) the log holds there`,
        });
      }
    }
  }
  return findings;
};

/** The positions of `sorted` in (after, upTo]. */
function positionsBetween(sorted: readonly number[], after: number, upTo: number): number[] {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle]! <= after) low = middle + 1;
    else high = middle;
  }
  const found: number[] = [];
  for (let at = low; at < sorted.length && sorted[at]! <= upTo; at++) found.push(sorted[at]!);
  return found;
}
