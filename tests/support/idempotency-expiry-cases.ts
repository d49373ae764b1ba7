import { it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet } from '../../application/index.ts';
import { startIdempotencyExpiry } from '../../adapters/store/tables/idempotency-expiry.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import type { TestService } from './test-service.ts';

/** Records left in the `idempotency_keys` table. */
async function recordCount(store: Pick<SqlPetStore, 'db'>): Promise<number> {
  const row = await store.db.selectFrom('idempotency_keys').select((select) => select.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The expiry of `Idempotency-Key` records, on one backend: `openStore` gives a fresh migrated store,
 * `startService` the service over a fresh database with the environment given.
 */
export function idempotencyExpiryCases(
  openStore: () => Promise<{ store: SqlPetStore; close(): Promise<void> }>,
  startService: (environment: Record<string, string>) => Promise<TestService>,
): void {
  it('deletes expired Idempotency-Key records in the background, with PETSTORE_IDEMPOTENCY_KEY_TTL_MS as their lifetime', async () => {
    // Long enough that all three are still stored when counted on a loaded machine.
    const api = await startService({ PETSTORE_IDEMPOTENCY_KEY_TTL_MS: '4000' });
    try {
      for (const key of ['first', 'second', 'third']) {
        const response = await api.request('/v1/pets', {
          method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ name: key, categoryId: 1 }),
        });
        assert.equal(response.status, 201);
      }
      const store = await api.database();
      assert.equal(await recordCount(store), 3);
      // Nothing but the service's own sweep deletes them; a second after expiring they are due.
      const deadline = performance.now() + 20_000;
      while ((await recordCount(store)) > 0) {
        assert.ok(performance.now() < deadline, `${await recordCount(store)} expired records still stored 20 s after they were written`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await api.stop();
    }
  });

  it('a sweep deletes, batch after batch, every record expired when it runs, and keeps the live ones', async () => {
    const { store, close } = await openStore();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const clock = { now: () => new Date(now) };
    const ports = { ...store, clock, idempotencyKeyTtlMs: 1000 };
    const expiry = startIdempotencyExpiry(store, { clock, everyMs: 3_600_000, batch: 3 });
    try {
      for (let n = 0; n < 7; n++) await addPet(ports, { name: `early ${n}`, categoryId: 1 }, { apiKeyId: 'k' }, { idempotencyKey: `early-${n}` });
      now += 1500;
      for (let n = 0; n < 2; n++) await addPet(ports, { name: `late ${n}`, categoryId: 1 }, { apiKeyId: 'k' }, { idempotencyKey: `late-${n}` });
      now += 500; // the early ones expired 1000 ms after they were written, the late ones expire 500 ms from now
      assert.equal(await expiry.sweep(), 7);
      assert.equal(await recordCount(store), 2);
      assert.equal(await expiry.sweep(), 0);
      // A live key still replays its pet; an expired one creates anew.
      const replayed = await addPet(ports, { name: 'late 0', categoryId: 1 }, { apiKeyId: 'k' }, { idempotencyKey: 'late-0' });
      assert.equal(replayed.name, 'late 0');
      assert.equal(await recordCount(store), 2);
      now += 500;
      assert.equal(await expiry.sweep(), 2);
      assert.equal(await recordCount(store), 0);
    } finally {
      await expiry.close();
      await close();
    }
  });

  it('sweeps of several instances at once delete each expired record once, without an error', async () => {
    const { store, close } = await openStore();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const clock = { now: () => new Date(now) };
    const ports = { ...store, clock, idempotencyKeyTtlMs: 1000 };
    const instances = [1, 2, 3].map(() => startIdempotencyExpiry(store, { clock, everyMs: 3_600_000, batch: 4 }));
    try {
      for (let n = 0; n < 30; n++) await addPet(ports, { name: `pet ${n}`, categoryId: 1 }, { apiKeyId: 'k' }, { idempotencyKey: `key-${n}` });
      now += 1000;
      const deleted = await Promise.all(instances.map((instance) => instance.sweep()));
      assert.equal(deleted.reduce((sum, count) => sum + count, 0), 30);
      assert.equal(await recordCount(store), 0);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
      await close();
    }
  });
}
