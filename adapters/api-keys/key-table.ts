import type { Kysely } from 'kysely';
import { generateApiKey, sha256Hex } from './key-verifier.ts';
import type { ApiKeyTable } from './key-verifier.ts';
import { translated } from '../store/sql-dialect.ts';
import type { SqlDialect } from '../store/sql-dialect.ts';
import type { PetStoreDatabase } from '../store/schema.ts';
import type { SqlPetStore } from '../store/sql-pet-store.ts';
import { disableSubscriptionsOf } from '../webhooks/sql-webhook-subscriptions.ts';

export interface ApiKeyRecord {
  readonly id: number;
  readonly label: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export interface ManagedApiKeys extends ApiKeyTable {
  /** Stores the new key's hash and returns the key: the only time it is ever seen. */
  create(label: string, now: Date): Promise<{ id: number; key: string }>;
  list(): Promise<ApiKeyRecord[]>;
  /** False when no live key has that id. */
  revoke(id: number, now: Date): Promise<boolean>;
  count(): Promise<number>;
}

/**
 * The key table: hashes only. Writes go through `writeOutsideLog` where the store gives one (SQLite: on its
 * writer, beside its groups, see `SqlPetStore.writeOutsideLog`).
 */
export function createSqlApiKeys(db: Kysely<PetStoreDatabase>, dialect: SqlDialect, writeOutsideLog?: SqlPetStore['writeOutsideLog']): ManagedApiKeys {
  const write = writeOutsideLog ?? (<T>(work: (on: Kysely<PetStoreDatabase>) => Promise<T>) => db.transaction().execute(work));
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const listener of listeners) listener();
  };
  return {
    onChange(listener) {
      listeners.push(listener);
    },
    async activeKeyHashes() {
      // Read on requests: a database that went away must answer 503, like the pet operations.
      const rows = await translated(dialect, () => db.selectFrom('api_keys').select(['id', 'key_hash']).where('revoked_at', 'is', null).execute());
      return new Map(rows.map((row) => [row.key_hash, row.id]));
    },
    async create(label, now) {
      const key = generateApiKey();
      const row = await write((on) => on
        .insertInto('api_keys')
        .values({ key_hash: sha256Hex(key), label, created_at: now.toISOString(), revoked_at: null })
        .returning('id')
        .executeTakeFirstOrThrow());
      changed();
      return { id: row.id, key };
    },
    async list() {
      const rows = await db.selectFrom('api_keys').select(['id', 'label', 'created_at', 'revoked_at']).orderBy('id').execute();
      return rows.map((row) => ({ id: row.id, label: row.label, createdAt: row.created_at, revokedAt: row.revoked_at }));
    },
    async revoke(id, now) {
      // What the key owns stops with it, in the same transaction: its webhook subscriptions (the running
      // services end what it holds open through `watchKeyRevocations`).
      const revoked = await write(async (on) => {
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
      changed();
      return revoked;
    },
    async count() {
      const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
