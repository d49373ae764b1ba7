import type { Check, Finding, HistoryModel } from '../model.ts';
import { createOp, setStatusOp } from '../operations.ts';
import type { CreateOp, SetStatusOp } from '../operations.ts';
import type { LogEvent } from '../pet-log.ts';
import { groupBy } from '../group-by.ts';

/**
 * `lost-write`: an acknowledged creation or status change that the log does not hold as acknowledged
 * (no event at its position, or one of another pet, name, category, status or version).
 */
export const lostWrite: Check = (model) => {
  const findings: Finding[] = [];
  const { log } = model;
  const lost = (index: number, position: number, why: string) =>
    findings.push({ anomaly: 'lost-write', ops: [index, model.logOp.completion!.index], positions: [position], why });
  for (const create of model.of('create').map(createOp)) {
    if (!create.ok) continue;
    const event = log.byPosition.get(create.ok.position);
    if (!event || event.kind !== 'added' || event.petId !== create.ok.id) {
      lost(create.index, create.ok.position, `pet ${create.ok.id} "${create.name}" was acknowledged at position ${create.ok.position}, where the log holds ${describe(event)}`);
    } else if (event.name !== create.name || event.categoryId !== create.categoryId || event.status !== (create.status ?? null)) {
      lost(create.index, create.ok.position, `pet ${create.ok.id} was acknowledged as sent, but the log holds it as ${JSON.stringify(event.served.data)}`);
    }
  }
  for (const change of model.of('set-status').map(setStatusOp)) {
    if (!change.ok) continue;
    const event = log.byPosition.get(change.ok.position);
    const at = event && event.petId === change.id ? log.petAt(change.id, event.position) : undefined;
    if (!at || at.status !== change.status || at.version !== change.ok.version) {
      lost(change.index, change.ok.position, `pet ${change.id} acknowledged ${change.status} at version ${change.ok.version}, position ${change.ok.position}, where the log holds ${describe(event)}`);
    }
  }
  return findings;
};

/** `duplicate-create`: one creation (one name, one Idempotency-Key) that made more than one pet. */
export const duplicateCreate: Check = (model) => {
  const findings: Finding[] = [];
  const creates = model.of('create').map(createOp);
  const byName = groupBy(creates, (create) => create.name);
  const addedByName = groupBy(model.log.events.filter((event) => event.kind === 'added'), (event) => event.name ?? '');
  for (const [name, events] of addedByName) {
    if (events.length < 2) continue;
    const ops = (byName.get(name) ?? []).map((create) => create.index);
    findings.push({ anomaly: 'duplicate-create', ops, positions: events.map((event) => event.position), why: `"${name}" was added ${events.length} times: pets ${events.map((event) => event.petId).join(', ')}` });
  }
  for (const [key, sameKey] of groupBy(creates.filter((create) => create.key !== undefined), (create) => create.key!)) {
    const ids = new Set(sameKey.flatMap((create) => (create.ok ? [create.ok.id] : [])));
    if (ids.size > 1) findings.push({ anomaly: 'duplicate-create', ops: sameKey.map((create) => create.index), why: `Idempotency-Key ${key} was answered with pets ${[...ids].join(', ')}` });
  }
  return findings;
};

/**
 * `phantom-write`: an event of the log that no operation could have written: no client sent it, or
 * only requests refused with a 4xx did. Each request writes at most one event: an acknowledged one
 * the event at its position, an indeterminate one any event it asked for.
 */
export const phantomWrite: Check = (model) => {
  const findings: Finding[] = [];
  const creates = groupBy(model.of('create').map(createOp), (create) => create.name);
  const changes = groupBy(model.of('set-status').map(setStatusOp), (change) => `${change.id} ${change.status}`);
  const used = new Set<SetStatusOp>();
  const unclaimed: LogEvent[] = [];
  for (const event of model.log.events) {
    // An order's commit moved the pet: the order's operation wrote it (the store's checks: `orders.ts`).
    if (event.orderId !== undefined) continue;
    if (event.kind === 'added') {
      const sent = creates.get(event.name ?? '') ?? [];
      if (!sent.some((create) => create.outcome !== 'fail')) phantom(event, sent);
      continue;
    }
    const owner = (changes.get(`${event.petId} ${event.status}`) ?? []).find((change) => change.ok?.position === event.position && !used.has(change));
    if (owner) used.add(owner);
    else unclaimed.push(event);
  }
  for (const event of unclaimed) {
    const sent = changes.get(`${event.petId} ${event.status}`) ?? [];
    const free = (change: SetStatusOp) => change.outcome === 'info' && !used.has(change);
    // A conditional request fits one version only: give it first, then any unconditional one.
    const owner = sent.find((change) => free(change) && change.ifMatch === event.version - 1) ?? sent.find((change) => free(change) && change.ifMatch === undefined);
    if (owner) used.add(owner);
    else phantom(event, sent);
  }
  return findings;

  function phantom(event: LogEvent, sent: readonly (CreateOp | SetStatusOp)[]) {
    const refused = sent.filter((op) => op.outcome === 'fail');
    findings.push({
      anomaly: 'phantom-write',
      ops: [...sent.map((op) => op.index), model.logOp.completion!.index],
      positions: [event.position],
      why: refused.length > 0 && refused.length === sent.length
        ? `${describe(event)} answers only requests the service refused`
        : `no request could have written ${describe(event)}`,
    });
  }
};

function describe(event: LogEvent | undefined): string {
  if (!event) return 'no event';
  return `${event.kind === 'added' ? `pet ${event.petId} "${event.name}" added` : `pet ${event.petId} changed to ${event.status}`} at position ${event.position} (version ${event.version})`;
}
