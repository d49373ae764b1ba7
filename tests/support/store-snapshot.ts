import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { PetStoreDatabase } from '../../adapters/store/schema.ts';

export interface StoreSnapshot {
  readonly events: number;
  readonly lastPosition: number;
  readonly pets: number;
  readonly petIdSequence: number;
}

/** Enough of the store to tell whether a request wrote anything: log, read model and id sequence. */
export async function snapshotStore(db: Kysely<PetStoreDatabase>): Promise<StoreSnapshot> {
  const { rows } = await sql<StoreSnapshot>`
    select (select count(*) from events) as events,
           (select coalesce(max(position), 0) from events) as lastPosition,
           (select count(*) from pets) as pets,
           (select value from sequences where name = 'pet_id') as petIdSequence`.execute(db);
  return { ...rows[0]! };
}
