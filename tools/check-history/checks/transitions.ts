import { isAllowedTransition, isPetStatus } from '../../../domain/index.ts';
import type { Check, Finding } from '../model.ts';
import { setStatusOp } from '../operations.ts';
import { groupBy } from '../group-by.ts';

/**
 * `invalid-transition`: a status change in the log that the status rules forbid, that repeats the
 * status the pet has, or whose `from` is not the pet's status before it; or a change of a pet the log
 * had not added.
 */
export const invalidTransition: Check = (model) => {
  const findings: Finding[] = [];
  const changes = groupBy(model.of('set-status').map(setStatusOp), (change) => `${change.id} ${change.status}`);
  const logIndex = model.logOp.completion!.index;
  for (const [petId, events] of model.log.pets) {
    events.forEach((event, at) => {
      const before = events[at - 1];
      const invalid = (why: string) => findings.push({
        anomaly: 'invalid-transition',
        ops: [...(changes.get(`${petId} ${event.status}`) ?? []).map((change) => change.index), logIndex],
        positions: before ? [before.position, event.position] : [event.position],
        why: `pet ${petId} at position ${event.position}: ${why}`,
      });
      if (event.kind === 'added') {
        if (before) invalid('added again');
        return;
      }
      if (!before) return invalid('changed before it was added');
      const to = event.status;
      if (event.from !== before.status) invalid(`from ${event.from ?? 'none'}, but its status was ${before.status ?? 'none'}`);
      else if (to === before.status || !isPetStatus(to) || !isAllowedTransition(before.status === null || !isPetStatus(before.status) ? undefined : before.status, to)) {
        invalid(`${before.status ?? 'none'} → ${to ?? 'none'}, which the status rules forbid`);
      }
    });
  }
  return findings;
};
