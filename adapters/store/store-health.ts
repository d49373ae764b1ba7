import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { PetStatus } from '../../domain/index.ts';
import { pendingMigrations } from './migrations.ts';
import type { PetStoreDatabase } from './schema.ts';

export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string };

/** Ready: the database answers and every migration this code knows has been applied. */
export async function checkReadiness(db: Kysely<PetStoreDatabase>): Promise<Readiness> {
  let pending: string[];
  try {
    await sql`select 1`.execute(db);
    pending = await pendingMigrations(db);
  } catch (error) {
    return { ready: false, reason: `the database does not answer: ${(error as Error).message}` };
  }
  if (pending.length > 0) return { ready: false, reason: `migrations not applied: ${pending.join(', ')}` };
  return { ready: true };
}

/** Pets in the read model per status; served from the (status, id) index. */
export async function countPetsByStatus(db: Kysely<PetStoreDatabase>): Promise<Map<PetStatus | null, number>> {
  const rows = await db
    .selectFrom('pets')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute();
  return new Map(rows.map((row) => [row.status as PetStatus | null, Number(row.count)]));
}
