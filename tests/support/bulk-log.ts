import type { Insertable, Kysely } from 'kysely';
import type { EventsTable, PetsTable, PetStoreDatabase } from '../../adapters/store/schema.ts';

/** Names JSON, SQL text and array literals must carry as they are. */
const AWKWARD_NAMES = [`O'Brien "Rex"`, 'back\\slash, {braces}', 'tab\tand\nnewline', 'Ünïcødé 🐶', 'NULL', ''];

const BASE_TIME = Date.parse('2026-11-21T00:00:00.000Z');
const at = (second: number) => new Date(BASE_TIME + second * 1000).toISOString();

/**
 * Writes a log of `pets` pets straight into `events`, leaving `pets` as it was: each pet's addition
 * (every seventh with no status), then, later in the log, a status change for every third. The
 * last pet is stored as schema version 1 wrote it: no `status` key. Returns the rows `pets` should
 * hold once rebuilt, in id order. Ids start at `firstId`.
 */
export async function writeBulkLog(db: Kysely<PetStoreDatabase>, pets: number, firstId = 1): Promise<PetsTable[]> {
  const events: Insertable<EventsTable>[] = [];
  const expected: PetsTable[] = [];
  const metadata = (schemaVersion: number, recordedAt: string) => JSON.stringify({ schemaVersion, recordedAt, requestId: 'bulk', apiKeyId: 'bulk' });
  for (let index = 0; index < pets; index++) {
    const id = firstId + index;
    const name = index % 500 < AWKWARD_NAMES.length ? `${AWKWARD_NAMES[index % 500]} ${id}` : `pet ${id}`;
    const status = index % 7 === 0 ? null : 'available';
    const recordedAt = at(index);
    const oldShape = index === pets - 1;
    const data = oldShape ? { id, name, categoryId: 1 + (index % 12) } : { id, name, categoryId: 1 + (index % 12), status };
    events.push({ stream_id: `pet-${id}`, stream_version: 1, type: 'PetAdded', data: JSON.stringify(data), metadata: metadata(oldShape ? 1 : 2, recordedAt), recorded_at: recordedAt });
    expected.push({ id, name, category_id: 1 + (index % 12), status: oldShape ? null : status, version: 1, created_at: recordedAt, updated_at: recordedAt });
  }
  for (const row of expected) {
    if (row.id % 3 !== 0 || row.status === null) continue;
    const recordedAt = at(pets + row.id);
    events.push({ stream_id: `pet-${row.id}`, stream_version: 2, type: 'PetStatusChanged', data: JSON.stringify({ id: row.id, from: row.status, to: 'pending' }), metadata: metadata(1, recordedAt), recorded_at: recordedAt });
    Object.assign(row, { status: 'pending', version: 2, updated_at: recordedAt });
  }
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < events.length; start += 500) await trx.insertInto('events').values(events.slice(start, start + 500)).execute();
  });
  return expected;
}
