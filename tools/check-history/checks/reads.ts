import type { Check, Finding } from '../model.ts';
import { listOp, readOp } from '../operations.ts';
import type { Pet } from '../operations.ts';

/**
 * `stale-read`: a read or listing that named `Petstore-Min-Position` m and misses the effect of an
 * event at a position ≤ m: a pet not found, an older version, a status the pet left before m, or a
 * listing without a pet that matched its filter from m on and falls within its page.
 */
export const staleRead: Check = (model) => {
  const findings: Finding[] = [];
  const { log } = model;
  const logIndex = model.logOp.completion!.index;
  for (const read of model.of('read').map(readOp)) {
    if (!read.ok || read.minPosition === undefined) continue;
    const expected = log.petAt(read.id, read.minPosition);
    if (!expected.present) continue;
    const stale = (why: string) => findings.push({ anomaly: 'stale-read', ops: [read.index, logIndex], why: `pet ${read.id} read at min position ${read.minPosition}: ${why}` });
    if (read.ok.pet === null) stale(`not found, though the log holds it at version ${expected.version} by then`);
    else if (read.ok.version !== undefined && read.ok.version < expected.version) stale(`version ${read.ok.version}, older than ${expected.version}`);
    else if (!log.statusesFrom(read.id, read.minPosition).has(read.ok.pet.status ?? null)) stale(`status ${read.ok.pet.status ?? 'none'}, which it left before then`);
  }
  const ids = [...log.pets.keys()].sort((a, b) => a - b);
  for (const list of model.of('list').map(listOp)) {
    if (!list.ok || list.minPosition === undefined) continue;
    const m = list.minPosition;
    const stale = (id: number, why: string) => findings.push({ anomaly: 'stale-read', ops: [list.index, logIndex], why: `listing${list.status ? ` of ${list.status}` : ''} at min position ${m}: pet ${id} ${why}` });
    const shown = new Set<number>();
    for (const pet of list.ok.pets) {
      shown.add(pet.id);
      if (log.petAt(pet.id, m).present && !log.statusesFrom(pet.id, m).has(pet.status ?? null)) stale(pet.id, `is shown ${pet.status ?? 'without a status'}, a status it left before then`);
    }
    const after = list.after ?? 0;
    const upTo = list.ok.pets.length >= list.limit ? Math.max(...list.ok.pets.map((pet) => pet.id)) : Infinity;
    for (const id of ids) {
      if (id <= after || id > upTo || shown.has(id) || !log.petAt(id, m).present) continue;
      const statuses = log.statusesFrom(id, m);
      if (list.status === undefined || (statuses.size === 1 && statuses.has(list.status))) stale(id, `is missing, though it matched from then on`);
    }
  }
  return findings;
};

/** `read-invalid`: a read answered with a pet (or a version of it) that the log never held. */
export const readInvalid: Check = (model) => {
  const findings: Finding[] = [];
  for (const read of model.of('read').map(readOp)) {
    if (!read.ok?.pet) continue;
    const pet: Pet = read.ok.pet;
    const events = model.log.pets.get(read.id) ?? [];
    const version = read.ok.version;
    const at = version === undefined ? undefined : events[version - 1];
    const added = events[0];
    const why = pet.id !== read.id ? `answered with pet ${pet.id}`
      : !added ? 'the log never holds it'
      : pet.name !== added.name || pet.categoryId !== added.categoryId ? `answered ${JSON.stringify(pet)}, unlike the pet the log added`
      : version !== undefined && !at ? `answered at version ${version}, which the log never reaches`
      : at && at.status !== (pet.status ?? null) ? `answered ${pet.status ?? 'none'} at version ${version}, where the log holds ${at.status ?? 'none'}`
      : undefined;
    if (why) findings.push({ anomaly: 'read-invalid', ops: [read.index, model.logOp.completion!.index], why: `pet ${read.id}: ${why}` });
  }
  return findings;
};
