import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkHistory } from '../../tools/check-history/check.ts';
import { ackStep, claimed, claimStep, cleanGroupSteps, cleanLog, cleanSteps, groupReadStep, historyText, parkStep, replayStep } from './hand-made-history.ts';
import type { Step } from './hand-made-history.ts';

/** The clean history with the clean group's steps, some inserted before the group's step `before`. */
function withGroup(before: number, steps: readonly Step[]): Step[] {
  const clean = cleanSteps();
  const group = cleanGroupSteps();
  return [...clean.slice(0, -1), ...group.slice(0, before), ...steps, ...group.slice(before), clean.at(-1)!];
}

/** The index naming the group step at `at` (among the group's steps, with `inserted` steps put before it) in a finding. */
const groupCompletion = (at: number) => 2 * (15 + at) + 1;

function only(steps: readonly Step[], name: string) {
  const { anomalies } = checkHistory(historyText(steps));
  assert.deepEqual(Object.keys(anomalies), [name], JSON.stringify(anomalies));
  return anomalies[name]!;
}

describe('the history checker on a consumer group\'s leases', () => {
  const log = cleanLog();

  it('names group-double-lease: an event handed to a second consumer while the first one\'s lease on it is certainly live', () => {
    // c1 holds positions 3 and 4 (group step 4); before its leases can expire, c2 is handed 4 as well.
    const [finding] = only(withGroup(5, [claimStep('c2', claimed(log, [4, 'L4x']))]), 'group-double-lease');
    assert.deepEqual(finding!.positions, [4]);
    assert.deepEqual(finding!.ops, [groupCompletion(4), groupCompletion(5)]);
  });

  it('does not name group-double-lease once the first lease may have expired, or after an ack of it was sent', () => {
    assert.deepEqual(checkHistory(historyText(withGroup(5, [claimStep('c2', claimed(log, [4, 'L4x', 2]), 1500)]))).anomalies, {});
    // The clean history itself: c0 is handed 3 and 4 again only once c1's leases may have expired.
    assert.deepEqual(checkHistory(historyText(withGroup(0, []))).anomalies, {});
  });

  it('names group-acked-redelivered: an event handed out again after an ack of it was answered acked', () => {
    // Positions 1, 2 and 6 are acked (group step 2); then 6 is handed out again, its lease long expired.
    const [finding] = only(withGroup(3, [claimStep('c2', claimed(log, [6, 'L6x', 2]), 1500)]), 'group-acked-redelivered');
    assert.deepEqual(finding!.positions, [6]);
    assert.deepEqual(finding!.ops, [groupCompletion(2), groupCompletion(3)]);
  });

  it('does not name group-acked-redelivered for an ack answered stale or never answered', () => {
    const unanswered: Step = { ...ackStep('c0', ['L1', 'L2', 'L6']), outcome: 'info', value: { error: 'timeout' } };
    const steps = withGroup(3, [claimStep('c2', claimed(log, [6, 'L6x', 2]), 1500), ackStep('c2', ['L6x'])]);
    steps[15 + 2] = unanswered;
    assert.deepEqual(checkHistory(historyText(steps)).anomalies, {});
  });

  /**
   * The clean group up to c1's claim of 3 and 4; c1 parks them, the checkpoint passes them, a replay hands
   * them to c2 while c1's leases would still be live, c2 acks them; `inserted` go after c2's claim.
   */
  function replayed(inserted: readonly Step[] = []): Step[] {
    const clean = cleanSteps();
    const group = cleanGroupSteps();
    return [
      ...clean.slice(0, -1), ...group.slice(0, 5),
      parkStep('c1', ['L3', 'L4']),
      groupReadStep('c1', { checkpoint: 4, head: 6, inFlight: 0 }),
      replayStep('c1', 2),
      claimStep('c2', claimed(log, [3, 'L3r'], [4, 'L4r'])),
      ...inserted,
      ackStep('c2', ['L3r', 'L4r']),
      ...group.slice(8),
      clean.at(-1)!,
    ];
  }

  it('passes a replay of parked events: handed out again within the parked leases\' timeout, acked after a checkpoint read past them', () => {
    assert.deepEqual(checkHistory(historyText(replayed())).anomalies, {});
  });

  it('names group-double-lease and group-acked-redelivered after a replay too', () => {
    const [twice] = only(replayed([claimStep('c3', claimed(log, [4, 'L4z']))]), 'group-double-lease');
    assert.deepEqual(twice!.positions, [4]);
    const [again] = only(replayed([claimStep('c3', claimed(log, [6, 'L6z', 2]))]), 'group-acked-redelivered');
    assert.deepEqual(again!.positions, [6]);
  });
});
