import { createHash, randomBytes } from 'node:crypto';

/** The key table's view from the service: which hashes are live, and under which id. */
export interface ApiKeyTable {
  activeKeyHashes(): Promise<ReadonlyMap<string, number>>;
  /** Calls `listener` after each change made through this table (a key created or revoked in this process). */
  onChange?(listener: () => void): void;
}

export type KeyCheck = { readonly ok: true; readonly keyId: string } | { readonly ok: false };

export interface ApiKeyVerifier {
  verify(key: string): Promise<KeyCheck>;
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

/**
 * Checks keys through their SHA-256, looked up in a map of hashes. A byte-by-byte comparison of hashes
 * can only leak how much of a hash an attacker's guess shares with a real one, which tells nothing
 * about the key (the hash cannot be inverted), so this is as safe as a constant-time comparison of the
 * keys and needs no scan over every key.
 */
export function createApiKeyVerifier(options: { environmentKeys: readonly string[]; table?: ApiKeyTable; now?: () => number }): ApiKeyVerifier {
  const now = options.now ?? Date.now;
  const fromEnvironment = new Map<string, string>();
  for (const key of options.environmentKeys) {
    const hash = sha256Hex(key);
    fromEnvironment.set(hash, environmentKeyId(hash));
  }
  let tableHashes: ReadonlyMap<string, number> = new Map();
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;
  // Bumped by every change made in this process: a read that began before it must not count as fresh.
  let generation = 0;

  async function refreshTable(): Promise<void> {
    if (!options.table || now() - loadedAt < KEY_TABLE_REFRESH_MS) return;
    if (!loading) {
      const started = generation;
      const load: Promise<void> = options.table.activeKeyHashes().then((hashes) => {
        if (started !== generation) return;
        tableHashes = hashes;
        loadedAt = now();
      }).finally(() => {
        if (loading === load) loading = undefined;
      });
      loading = load;
    }
    await loading;
  }

  // A key revoked (or created) through this process counts at once: the next check re-reads the table.
  options.table?.onChange?.(() => {
    generation += 1;
    loadedAt = -Infinity;
    loading = undefined;
  });

  return {
    async verify(key: string): Promise<KeyCheck> {
      const hash = sha256Hex(key);
      const envId = fromEnvironment.get(hash);
      if (envId !== undefined) return { ok: true, keyId: envId };
      await refreshTable();
      const tableId = tableHashes.get(hash);
      if (tableId !== undefined) return { ok: true, keyId: String(tableId) };
      return { ok: false };
    },
  };
}
