import { createHash, randomBytes } from 'node:crypto';

/** The key table's view from the service: which hashes are live, and under which id. */
export interface ApiKeyTable {
  activeKeyHashes(): Promise<ReadonlyMap<string, number>>;
}

export type KeyCheck = { readonly ok: true; readonly keyId: string } | { readonly ok: false };

export interface ApiKeyVerifier {
  /** Synchronous when it can answer from memory; a promise when the key table must be re-read first. */
  verify(key: string): KeyCheck | Promise<KeyCheck>;
}

/** Revocations in the table reach every instance within this time. */
export const KEY_TABLE_REFRESH_MS = 1000;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function generateApiKey(): string {
  return `ps_${randomBytes(32).toString('base64url')}`;
}

/** The id recorded for a key from the environment: never the key, only a short prefix of its hash. */
export function environmentKeyId(keyHash: string): string {
  return `env:${keyHash.slice(0, 12)}`;
}

const REFUSED: KeyCheck = { ok: false };

/** How many verified keys from the table are remembered between reloads; beyond it, keys are hashed each time. */
const VERIFIED_KEYS_REMEMBERED = 1024;

/**
 * Checks keys through their SHA-256, looked up in a map of hashes. A byte-by-byte comparison of hashes
 * can only leak how much of a hash an attacker's guess shares with a real one, which tells nothing
 * about the key (the hash cannot be inverted), so this is as safe as a constant-time comparison of the
 * keys and needs no scan over every key.
 *
 * Hashing costs about a microsecond, as much as the rest of a cached listing, so keys that have
 * passed are remembered as they were sent: the configured keys for good (they are in memory anyway),
 * keys from the table until the table is next reloaded, which keeps the one-second bound on revocation.
 * Only keys that passed are remembered, so guesses cannot grow the memory, and a guess is looked up in a
 * hash map, which compares it with a real key only when their (seeded) string hashes collide.
 */
export function createApiKeyVerifier(options: { environmentKeys: readonly string[]; table?: ApiKeyTable; now?: () => number }): ApiKeyVerifier {
  const now = options.now ?? Date.now;
  const fromEnvironment = new Map<string, KeyCheck>();
  for (const key of options.environmentKeys) fromEnvironment.set(key, { ok: true, keyId: environmentKeyId(sha256Hex(key)) });
  let tableHashes: ReadonlyMap<string, number> = new Map();
  let verifiedFromTable = new Map<string, KeyCheck>();
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;

  function reloadTable(table: ApiKeyTable): Promise<void> {
    loading ??= table.activeKeyHashes().then((hashes) => {
      tableHashes = hashes;
      verifiedFromTable = new Map();
      loadedAt = now();
    }).finally(() => {
      loading = undefined;
    });
    return loading;
  }

  function checkTable(key: string): KeyCheck {
    const remembered = verifiedFromTable.get(key);
    if (remembered !== undefined) return remembered;
    const tableId = tableHashes.get(sha256Hex(key));
    if (tableId === undefined) return REFUSED;
    const check: KeyCheck = { ok: true, keyId: String(tableId) };
    if (verifiedFromTable.size < VERIFIED_KEYS_REMEMBERED) verifiedFromTable.set(key, check);
    return check;
  }

  return {
    verify(key: string): KeyCheck | Promise<KeyCheck> {
      const configured = fromEnvironment.get(key);
      if (configured !== undefined) return configured;
      const table = options.table;
      if (!table) return REFUSED;
      if (now() - loadedAt >= KEY_TABLE_REFRESH_MS) return reloadTable(table).then(() => checkTable(key));
      return checkTable(key);
    },
  };
}
