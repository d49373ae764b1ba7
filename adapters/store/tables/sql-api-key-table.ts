import type { Kysely } from 'kysely';
import { translated } from '../sql-dialect.ts';
import type { PetStoreDatabase } from '../schema.ts';
import type { SqlDatabase } from '../sql-pet-store.ts';
import { disableSubscriptionsOf } from './sql-webhook-subscriptions.ts';

/**
 * The `api_keys` table: hashes only, the same queries on SQLite and PostgreSQL. Writes go through
 * `writeOutsideLog` where the store has one (SQLite: on its writer, beside its groups).
 */
export function createSqlApiKeyTable({ db, dialect, writeOutsideLog }: SqlDatabase) {
  const write = writeOutsideLog ?? (<T>(work: (on: Kysely<PetStoreDatabase>) => Promise<T>) => db.transaction().execute(work));
  return {
    /** Each live key's hash, with its id. */
    async activeKeyHashes(): Promise<Map<string, number>> {
      // Read on requests: a database that went away must answer 503, like the pet operations.
      const rows = await translated(dialect, () => db.selectFrom('api_keys').select(['id', 'key_hash']).where('revoked_at', 'is', null).execute());
      return new Map(rows.map((row) => [row.key_hash, row.id]));
    },
    /** Stores a new key's hash; answers its id. */
    async insert(keyHash: string, label: string, now: Date): Promise<number> {
      const row = await write((on) => on
        .insertInto('api_keys')
        .values({ key_hash: keyHash, label, created_at: now.toISOString(), revoked_at: null })
        .returning('id')
        .executeTakeFirstOrThrow());
      return row.id;
    },
    async list(): Promise<{ id: number; label: string; createdAt: string; revokedAt: string | null }[]> {
      const rows = await db.selectFrom('api_keys').select(['id', 'label', 'created_at', 'revoked_at']).orderBy('id').execute();
      return rows.map((row) => ({ id: row.id, label: row.label, createdAt: row.created_at, revokedAt: row.revoked_at }));
    },
    /** Revokes a live key and, in the same transaction, disables its webhook subscriptions; false when no live key has that id. */
    revoke(id: number, now: Date): Promise<boolean> {
      return write(async (on) => {
        const result = await on
          .updateTable('api_keys')
          .set({ revoked_at: now.toISOString() })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return false;
        await disableSubscriptionsOf(on, String(id));
        return true;
      });
    },
    /** How many live keys there are. */
    async count(): Promise<number> {
      const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
