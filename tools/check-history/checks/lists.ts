import type { Check, Finding } from '../model.ts';
import { listOp } from '../operations.ts';

/**
 * `list-invalid`: a listing not in ascending id, longer than its limit, with an id at or below its
 * `after`, or holding a pet shown with another status than its filter, or whose status never matched it.
 */
export const listInvalid: Check = (model) => {
  const findings: Finding[] = [];
  for (const list of model.of('list').map(listOp)) {
    if (!list.ok) continue;
    const { pets } = list.ok;
    const invalid = (why: string) => findings.push({ anomaly: 'list-invalid', ops: [list.index], why });
    if (pets.length > list.limit) invalid(`${pets.length} pets for limit ${list.limit}`);
    pets.forEach((pet, at) => {
      if (at > 0 && pet.id <= pets[at - 1]!.id) invalid(`pet ${pet.id} follows pet ${pets[at - 1]!.id}: not in ascending id`);
      if (list.after !== undefined && pet.id <= list.after) invalid(`pet ${pet.id} is at or below after=${list.after}`);
      if (list.status === undefined) return;
      if (pet.status !== list.status) invalid(`pet ${pet.id} is shown ${pet.status ?? 'without a status'} in a listing of ${list.status}`);
      else if (!model.log.statusesFrom(pet.id, 0).has(list.status)) invalid(`pet ${pet.id} never was ${list.status}`);
    });
  }
  return findings;
};
