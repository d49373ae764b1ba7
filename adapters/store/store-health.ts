import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { PetStatus } from '../../domain/index.ts';
import { pendingMigrations } from './migrations.ts';
import type { PetStoreDatabase } from './schema.ts';
import type { SqlPetStore } from './sql-pet-store.ts';

export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string };

/** Readiness answers within this: a database that takes longer to say is not ready. */
export const READINESS_ANSWER_MS = 750;

/**
 * Ready: the database answers, every migration this code knows has been applied, and (where the store
 * can tell) writes can commit. Answers within `READINESS_ANSWER_MS`, whatever the database does.
 */
export async function checkReadiness(store: Pick<SqlPetStore, 'db' | 'checkWrites' | 'checkFollowing'>): Promise<Readiness> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => resolve({ ready: false, reason: `the database did not answer within ${READINESS_ANSWER_MS} ms` }), READINESS_ANSWER_MS);
  });
  try {
    return await Promise.race([askReadiness(store), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function askReadiness(store: Pick<SqlPetStore, 'db' | 'checkWrites' | 'checkFollowing'>): Promise<Readiness> {
  let pending: string[];
  try {
    await throwUnlessReachable(store.db);
    pending = await pendingMigrations(store.db);
  } catch (error) {
    return { ready: false, reason: `the database does not answer: ${(error as Error).message}` };
  }
  if (pending.length > 0) return { ready: false, reason: `migrations not applied: ${pending.join(', ')}` };
  const deaf = store.checkFollowing?.();
  if (deaf) return { ready: false, reason: `other instances' commits are not followed: ${deaf.message}` };
  const fault = await store.checkWrites?.();
  if (fault) {
    const code = (fault.cause as { code?: unknown } | undefined)?.code;
    return { ready: false, reason: `writes fail: ${fault.message}${typeof code === 'string' ? ` (${code})` : ''}` };
  }
  return { ready: true };
}

/** Resolves once the database answered a trivial query; rejects with why it did not. */
export async function throwUnlessReachable(db: Kysely<PetStoreDatabase>): Promise<void> {
  await sql`select 1`.execute(db);
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
