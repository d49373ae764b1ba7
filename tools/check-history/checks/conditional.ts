import type { Check, Finding } from '../model.ts';
import { setStatusOp } from '../operations.ts';
import { groupBy } from '../group-by.ts';

/**
 * `lost-update`: two status changes of one pet conditional on the same version (If-Match) that were
 * both acknowledged as appended, or one acknowledged at a version its condition does not allow.
 */
export const lostUpdate: Check = (model) => {
  const findings: Finding[] = [];
  const conditional = model.of('set-status').map(setStatusOp).filter((change) => change.ok && change.ifMatch !== undefined);
  for (const change of conditional) {
    const { version } = change.ok!;
    if (version !== change.ifMatch && version !== change.ifMatch! + 1) {
      findings.push({ anomaly: 'lost-update', ops: [change.index], why: `pet ${change.id}: a change on If-Match ${change.ifMatch} was acknowledged at version ${version}` });
    }
  }
  const appended = conditional.filter((change) => change.ok!.version === change.ifMatch! + 1);
  for (const [key, same] of groupBy(appended, (change) => `${change.id} ${change.ifMatch}`)) {
    if (same.length < 2) continue;
    const [id, version] = key.split(' ');
    findings.push({
      anomaly: 'lost-update', ops: same.map((change) => change.index), positions: same.map((change) => change.ok!.position),
      why: `pet ${id}: ${same.length} changes on If-Match ${version} were each acknowledged as appended`,
    });
  }
  return findings;
};
