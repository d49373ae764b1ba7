import { generateApiKey, sha256Hex } from './key-verifier.ts';
import type { ApiKeyTable } from './key-verifier.ts';

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

/** Where keys are kept: their hashes, never a key (the store's `apiKeyTable`). */
export interface ApiKeyRows {
  activeKeyHashes(): Promise<Map<string, number>>;
  /** Stores a new key's hash; answers its id. */
  insert(keyHash: string, label: string, now: Date): Promise<number>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes a live key and, with it, what it owns durably (its webhook subscriptions); false when no live key has that id. */
  revoke(id: number, now: Date): Promise<boolean>;
  count(): Promise<number>;
}

/** The key table: a key is made here and only its hash is stored; a change made here is told to `onChange` listeners at once. */
export function createManagedApiKeys(rows: ApiKeyRows): ManagedApiKeys {
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const listener of listeners) listener();
  };
  return {
    onChange(listener) {
      listeners.push(listener);
    },
    activeKeyHashes: () => rows.activeKeyHashes(),
    async create(label, now) {
      const key = generateApiKey();
      const id = await rows.insert(sha256Hex(key), label, now);
      changed();
      return { id, key };
    },
    list: () => rows.list(),
    async revoke(id, now) {
      // What the key owns stops with it, in the same transaction: its webhook subscriptions (the running
      // services end what it holds open through `watchKeyRevocations`).
      const revoked = await rows.revoke(id, now);
      changed();
      return revoked;
    },
    count: () => rows.count(),
  };
}
