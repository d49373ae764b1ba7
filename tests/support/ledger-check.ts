import type { Kysely } from 'kysely';
import type { PetStatus } from '../../domain/index.ts';
import type { PetStoreDatabase } from '../../adapters/store/schema.ts';
import { petWithStatus } from './pet-workload.ts';
import type { PetLedger } from './pet-workload.ts';
import { verifyProjection } from './projection-check.ts';
import { describeStates } from './status-knowledge.ts';
import type { PossibleState } from './status-knowledge.ts';

export interface LedgerReport {
  /** Acknowledged creates whose pet was read back over HTTP and found in the table and the log. */
  readonly acknowledgedChecked: number;
  /** Status changes answered 200, each found in the log at the version its ETag named. */
  readonly changesChecked: number;
  /** Creates whose answer never came but which were stored (allowed, once each). */
  readonly unansweredStored: number;
  /** Status changes in the log at a version no 200 named: changes whose answer was lost (allowed, at most one each). */
  readonly unansweredChangesStored: number;
  readonly storedPets: number;
  readonly events: number;
  /** Every broken promise found; empty when the store kept every one. */
  readonly problems: readonly string[];
}

const holds = (states: readonly PossibleState[], status: PetStatus | undefined, version: number) =>
  states.some((state) => state.status === status && state.version === version);

/**
 * Compares what a client was told with what the store holds:
 * - every acknowledged pet reads back over HTTP with its creation fields and a (status, ETag) the
 *   client allows: the last acknowledged status, or one of the possible ones after a lost change;
 * - every stored pet was sent by the client, with the name and category it sent, under the id it was
 *   told (or, when its answer was lost, under any id, untouched since), and no name is stored twice;
 *   its status and version are ones the client allows;
 * - the log holds each acknowledged write at the version it was acknowledged with: version 1 is the
 *   pet as created, and at the version of each 200's ETag the pet had the status that 200 gave;
 * - the `pets` table is what a fold of the `events` log gives.
 */
export async function checkLedger(ledger: PetLedger, read: { baseUrl: string; key: string; db: Kysely<PetStoreDatabase> }): Promise<LedgerReport> {
  const problems = [...ledger.problems];
  const acknowledged = [...ledger.acknowledged.values()];
  let cursor = 0;
  const reader = async () => {
    while (cursor < acknowledged.length) {
      const pet = acknowledged[cursor++]!;
      const states = ledger.states.get(pet.id)!;
      const response = await fetch(`${read.baseUrl}/pets/${pet.id}`, { headers: { authorization: `Bearer ${read.key}` } });
      const text = await response.text();
      const version = Number(/^"([0-9]+)"$/.exec(response.headers.get('etag') ?? '')?.[1]);
      const allowed = states.some((state) => state.version === version && text === JSON.stringify(petWithStatus(pet, state.status)));
      if (response.status !== 200 || !allowed) problems.push(`acknowledged pet ${pet.id}, known as ${describeStates(states)}, reads back as ${response.status} ETag ${response.headers.get('etag')} ${text}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, reader));

  const rows = await read.db.selectFrom('pets').select(['id', 'name', 'category_id', 'status', 'version']).orderBy('id').execute();
  const acknowledgedIdByName = new Map(acknowledged.map((pet) => [pet.name, pet.id]));
  const seenNames = new Set<string>();
  let unansweredStored = 0;
  for (const row of rows) {
    const status = (row.status ?? undefined) as PetStatus | undefined;
    const described = JSON.stringify({ ...row, status });
    const sent = ledger.sent.get(row.name);
    if (!sent) problems.push(`stored pet ${described} was never sent`);
    else if (row.category_id !== sent.categoryId) problems.push(`stored pet ${described} was sent as ${JSON.stringify(sent)}`);
    if (seenNames.has(row.name)) problems.push(`${JSON.stringify(row.name)} is stored twice`);
    seenNames.add(row.name);
    const toldId = acknowledgedIdByName.get(row.name);
    if (toldId === undefined) {
      if (ledger.unanswered.has(row.name)) {
        unansweredStored++;
        // No client knew its id, so nothing changed it.
        if (sent && (status !== sent.status || row.version !== 1)) problems.push(`stored pet ${described} was sent as ${JSON.stringify(sent)} and never changed`);
      } else if (sent) problems.push(`stored pet ${row.id} was neither acknowledged nor left unanswered`);
    } else if (toldId !== row.id) problems.push(`${JSON.stringify(row.name)} is stored as ${row.id}, acknowledged as ${toldId}`);
    else if (!holds(ledger.states.get(row.id)!, status, row.version)) problems.push(`stored pet ${described} is known as ${describeStates(ledger.states.get(row.id)!)}`);
  }
  for (const pet of acknowledged) if (!seenNames.has(pet.name)) problems.push(`acknowledged pet ${pet.id} is not in the pets table`);

  const statusesInLog = await statusByVersion(read.db);
  for (const pet of acknowledged) {
    const created = statusesInLog.get(pet.id)?.[0];
    if (created?.type !== 'PetAdded' || created.status !== pet.status) problems.push(`acknowledged pet ${JSON.stringify(pet)} starts its stream as ${JSON.stringify(created)}`);
  }
  const acknowledgedVersions = new Set<string>();
  for (const change of ledger.acknowledgedChanges) {
    acknowledgedVersions.add(`${change.id}@${change.version}`);
    const stream = statusesInLog.get(change.id) ?? [];
    const logged = stream[change.version - 1];
    if (logged === undefined || logged.status !== change.status) {
      problems.push(`the change of pet ${change.id} to ${change.status} acknowledged with ETag "${change.version}" is not in the log: its stream has ${stream.length} version(s), version ${change.version} is ${JSON.stringify(logged)}`);
    }
  }
  // A 200 to the status a pet already has names an earlier version, so this may undercount; it can never overcount.
  let unansweredChangesStored = 0;
  for (const pet of acknowledged) {
    const stream = statusesInLog.get(pet.id) ?? [];
    for (let version = 2; version <= stream.length; version++) if (!acknowledgedVersions.has(`${pet.id}@${version}`)) unansweredChangesStored++;
  }
  if (unansweredChangesStored > ledger.changeCounts.lost) problems.push(`the log holds ${unansweredChangesStored} status changes no 200 named, but only ${ledger.changeCounts.lost} changes went unanswered`);

  const projection = await verifyProjection(read.db);
  problems.push(...projection.problems);
  return {
    acknowledgedChecked: acknowledged.length, changesChecked: ledger.acknowledgedChanges.length, unansweredStored, unansweredChangesStored, storedPets: rows.length, events: projection.events, problems,
  };
}

/** For each pet, its status after each version of its stream (index 0: version 1), read from the log. */
async function statusByVersion(db: Kysely<PetStoreDatabase>): Promise<Map<number, Array<{ type: string; status: PetStatus | undefined }>>> {
  const events = await db.selectFrom('events').select(['stream_id', 'stream_version', 'type', 'data']).orderBy('position').execute();
  const streams = new Map<number, Array<{ type: string; status: PetStatus | undefined }>>();
  for (const event of events) {
    const id = Number(event.stream_id.slice('pet-'.length));
    const stream = streams.get(id) ?? [];
    const data = JSON.parse(event.data) as { status?: PetStatus | null; to?: PetStatus };
    // Versions out of order are the projection check's to report; here a gap reads as a missing version.
    stream[event.stream_version - 1] = { type: event.type, status: (event.type === 'PetStatusChanged' ? data.to : data.status) ?? undefined };
    streams.set(id, stream);
  }
  return streams;
}
