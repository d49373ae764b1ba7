import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKeyVerifier, environmentKeyId, KEY_TABLE_REFRESH_MS, sha256Hex } from '../adapters/api-keys/key-verifier.ts';
import type { ApiKeyTable } from '../adapters/api-keys/key-verifier.ts';

/** A key table in memory that counts how often it is read. */
function tableOf(keys: Record<string, number>): ApiKeyTable & { keys: Record<string, number>; reads: number } {
  return {
    keys,
    reads: 0,
    async activeKeyHashes() {
      this.reads += 1;
      return new Map(Object.entries(this.keys).map(([key, id]) => [sha256Hex(key), id]));
    },
  };
}

describe('API key verifier', () => {
  const tableKey = 'table-key-0123456789';
  const environmentKey = 'env-key-0123456789ab';

  it('accepts a configured key with its hash-derived id, and a table key with its row id', async () => {
    const verifier = createApiKeyVerifier({ environmentKeys: [environmentKey], table: tableOf({ [tableKey]: 7 }) });
    assert.deepEqual(await verifier.verify(environmentKey), { ok: true, keyId: environmentKeyId(sha256Hex(environmentKey)) });
    assert.deepEqual(await verifier.verify(tableKey), { ok: true, keyId: '7' });
    assert.deepEqual(await verifier.verify('not-a-key-0123456789'), { ok: false });
  });

  it('reads the table at most once a second, however many requests come', async () => {
    let clock = 0;
    const table = tableOf({ [tableKey]: 7 });
    const verifier = createApiKeyVerifier({ environmentKeys: [], table, now: () => clock });
    for (let request = 0; request < 50; request++) assert.equal((await verifier.verify(tableKey)).ok, true);
    assert.equal(table.reads, 1);
    clock += KEY_TABLE_REFRESH_MS;
    await verifier.verify(tableKey);
    assert.equal(table.reads, 2);
  });

  it('refuses a remembered table key once it is revoked, within the refresh bound', async () => {
    let clock = 0;
    const table = tableOf({ [tableKey]: 7 });
    const verifier = createApiKeyVerifier({ environmentKeys: [], table, now: () => clock });
    assert.equal((await verifier.verify(tableKey)).ok, true);
    table.keys = {};
    clock += KEY_TABLE_REFRESH_MS - 1;
    assert.equal((await verifier.verify(tableKey)).ok, true, 'still inside the bound');
    clock += 1;
    assert.deepEqual(await verifier.verify(tableKey), { ok: false });
  });

  it('accepts a key added to the table after the next reload', async () => {
    let clock = 0;
    const table = tableOf({});
    const verifier = createApiKeyVerifier({ environmentKeys: [], table, now: () => clock });
    assert.equal((await verifier.verify(tableKey)).ok, false);
    table.keys = { [tableKey]: 9 };
    clock += KEY_TABLE_REFRESH_MS;
    assert.deepEqual(await verifier.verify(tableKey), { ok: true, keyId: '9' });
  });
});
