import { createHash, randomBytes } from 'node:crypto';

/** The key table's view from the service: which hashes are live, and under which id. */
export interface ApiKeyTable {
  activeKeyHashes(): Promise<ReadonlyMap<string, number>>;
  /** Calls `listener` after each change made through this table (a key created or revoked in this process). */
  onChange?(listener: () => void): void;
}

export type KeyCheck = { readonly ok: true; readonly keyId: string } | { readonly ok: false };

export interface ApiKeyVerifier {
  /** Synchronous when it can answer from memory; a promise when the key table must be re-read first. */
  verify(key: string): KeyCheck | Promise<KeyCheck>;
}

/** Revocations made by another process (the CLI, another instance) take effect within this time. */
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
  // Monotonic: a wall clock stepped back must not keep a revoked key accepted.
  const now = options.now ?? (() => performance.now());
  const fromEnvironment = new Map<string, KeyCheck>();
  for (const key of options.environmentKeys) fromEnvironment.set(key, { ok: true, keyId: environmentKeyId(sha256Hex(key)) });
  let tableHashes: ReadonlyMap<string, number> = new Map();
  let verifiedFromTable = new Map<string, KeyCheck>();
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;
  // Bumped by every change made in this process: a read that began before it must not count as fresh.
  let generation = 0;

  function reloadTable(table: ApiKeyTable): Promise<void> {
    if (!loading) {
      const started = generation;
      const load: Promise<void> = table.activeKeyHashes().then((hashes) => {
        // A change made in this process after the read began: this read may be stale, so it does not count.
        if (started !== generation) return;
        tableHashes = hashes;
        verifiedFromTable = new Map();
        loadedAt = now();
      }).finally(() => {
        if (loading === load) loading = undefined;
      });
      loading = load;
    }
    return loading;
  }

  function isStale(): boolean {
    return now() - loadedAt >= KEY_TABLE_REFRESH_MS;
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

  // A key revoked (or created) through this process counts at once: the next check re-reads the table.
  options.table?.onChange?.(() => {
    generation += 1;
    loadedAt = -Infinity;
    loading = undefined;
    verifiedFromTable = new Map();
  });

  return {
    verify(key: string): KeyCheck | Promise<KeyCheck> {
      const configured = fromEnvironment.get(key);
      if (configured !== undefined) return configured;
      const table = options.table;
      if (!table) return REFUSED;
      // A read overtaken by a change in this process does not count: read once more.
      if (isStale()) return reloadTable(table).then(() => (isStale() ? reloadTable(table) : undefined)).then(() => checkTable(key));
      return checkTable(key);
    },
  };
}
