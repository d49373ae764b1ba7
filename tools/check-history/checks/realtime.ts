import type { Check, Finding } from '../model.ts';
import { createOp, setStatusOp } from '../operations.ts';
import { groupBy } from '../group-by.ts';

/**
 * `realtime-order`: a write acknowledged before another write was sent, holding a later position than
 * it. The later write must certainly have appended its own event (a creation sent once, or a change
 * that the only request able to write its event); an acknowledged write is any that names a position.
 */
export const realtimeOrder: Check = (model) => {
  const creates = model.of('create').map(createOp);
  const changes = model.of('set-status').map(setStatusOp);
  const acknowledged = [...creates, ...changes]
    .flatMap((op) => (op.ok ? [{ index: op.index, at: op.completedAt, position: op.ok.position }] : []))
    .sort((a, b) => a.at - b.at);

  const sentOnce = groupBy(creates, (create) => create.name);
  const candidates = groupBy(changes.filter((change) => change.outcome !== 'fail'), (change) => `${change.id} ${change.status}`);
  const appended = [
    ...creates.filter((create) => create.ok && sentOnce.get(create.name)!.length === 1),
    ...changes.filter((change) => {
      if (!change.ok) return false;
      if (change.ifMatch !== undefined) return change.ok.version === change.ifMatch + 1;
      const event = model.log.byPosition.get(change.ok.position);
      // An order's commit may have written that event (its orderId says so): then this change may have found the status already there.
      return event?.kind === 'status-changed' && event.orderId === undefined && event.petId === change.id && candidates.get(`${change.id} ${change.status}`)!.length === 1;
    }),
  ].sort((a, b) => a.invokedAt - b.invokedAt);

  const findings: Finding[] = [];
  let next = 0;
  let highest: { index: number; position: number } | undefined;
  for (const later of appended) {
    while (next < acknowledged.length && acknowledged[next]!.at < later.invokedAt) {
      const earlier = acknowledged[next++]!;
      if (!highest || earlier.position > highest.position) highest = earlier;
    }
    if (highest && later.ok!.position < highest.position) {
      findings.push({
        anomaly: 'realtime-order', ops: [highest.index, later.index], positions: [highest.position, later.ok!.position],
        why: `a write acknowledged at position ${highest.position} before another was sent, which got position ${later.ok!.position}`,
      });
    }
  }
  return findings;
};
