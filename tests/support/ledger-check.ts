import type { Kysely } from 'kysely';
import type { Pet, PetStatus } from '../../domain/index.ts';
import type { PetStoreDatabase } from '../../adapters/sql/schema.ts';
import type { PetLedger } from './pet-workload.ts';
import { verifyProjection } from './projection-check.ts';

export interface LedgerReport {
  /** Acknowledged pets read back over HTTP and found identical. */
  readonly acknowledgedChecked: number;
  /** Creates whose answer never came but which were stored (allowed, once each). */
  readonly unansweredStored: number;
  readonly storedPets: number;
  readonly events: number;
  /** Every broken promise found; empty when the store kept every one. */
  readonly problems: readonly string[];
}

/**
 * Compares what a client was told with what the store holds:
 * - every acknowledged pet reads back over HTTP with identical fields;
 * - every stored pet was sent by the client, with the fields it sent, under the id it was told
 *   (or, when its answer was lost, under any id), and no name is stored twice;
 * - the `pets` table is what a fold of the `events` log gives.
 */
export async function checkLedger(ledger: PetLedger, read: { baseUrl: string; key: string; db: Kysely<PetStoreDatabase> }): Promise<LedgerReport> {
  const problems = [...ledger.problems];
  const acknowledged = [...ledger.acknowledged.values()];
  let cursor = 0;
  const reader = async () => {
    while (cursor < acknowledged.length) {
      const pet = acknowledged[cursor++]!;
      const response = await fetch(`${read.baseUrl}/pets/${pet.id}`, { headers: { authorization: `Bearer ${read.key}` } });
      const text = await response.text();
      if (response.status !== 200 || text !== JSON.stringify(pet)) problems.push(`acknowledged ${JSON.stringify(pet)} reads back as ${response.status} ${text}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, reader));

  const rows = await read.db.selectFrom('pets').select(['id', 'name', 'category_id', 'status']).orderBy('id').execute();
  const acknowledgedIdByName = new Map(acknowledged.map((pet) => [pet.name, pet.id]));
  const seenNames = new Set<string>();
  let unansweredStored = 0;
  for (const row of rows) {
    const stored: Pet = row.status === null ? { id: row.id, name: row.name, categoryId: row.category_id } : { id: row.id, name: row.name, categoryId: row.category_id, status: row.status as PetStatus };
    const sent = ledger.sent.get(row.name);
    if (!sent) problems.push(`stored pet ${JSON.stringify(stored)} was never sent`);
    else if (JSON.stringify(stored) !== JSON.stringify({ id: row.id, ...sent })) problems.push(`stored pet ${JSON.stringify(stored)} was sent as ${JSON.stringify(sent)}`);
    if (seenNames.has(row.name)) problems.push(`${JSON.stringify(row.name)} is stored twice`);
    seenNames.add(row.name);
    const toldId = acknowledgedIdByName.get(row.name);
    if (toldId === undefined) {
      if (ledger.unanswered.has(row.name)) unansweredStored++;
      else if (sent) problems.push(`stored pet ${row.id} was neither acknowledged nor left unanswered`);
    } else if (toldId !== row.id) problems.push(`${JSON.stringify(row.name)} is stored as ${row.id}, acknowledged as ${toldId}`);
  }
  for (const pet of acknowledged) if (!seenNames.has(pet.name)) problems.push(`acknowledged pet ${pet.id} is not in the pets table`);

  const projection = await verifyProjection(read.db);
  problems.push(...projection.problems);
  return { acknowledgedChecked: acknowledged.length, unansweredStored, storedPets: rows.length, events: projection.events, problems };
}
