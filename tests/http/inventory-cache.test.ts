import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cachedInventory } from '../../adapters/http/listing-cache/inventory-cache.ts';
import type { Commit } from '../../application/index.ts';

function fixture() {
  const listeners: ((commit: Commit) => void)[] = [];
  let reads = 0;
  let sold = 0;
  const inventory = cachedInventory(
    { count: async () => ((reads += 1), { available: 1, pending: 0, sold }) },
    { onCommitted: (listener) => (listeners.push(listener), () => {}), refresh: () => {} },
  );
  return {
    inventory,
    reads: () => reads,
    commit(commit: Commit, soldNow: number) {
      sold = soldNow;
      for (const listener of listeners) listener(commit);
    },
  };
}

describe('the inventory cache', () => {
  it('answers reads between writes without a query, and reads again after a commit that changed a pet', async () => {
    const { inventory, reads, commit } = fixture();
    assert.deepEqual(await inventory.count(), { available: 1, pending: 0, sold: 0 });
    await inventory.count();
    assert.equal(reads(), 1);
    commit({ last: 2, changes: [{ table: 'pets', id: 1, statuses: [null, 'sold'] }] }, 1);
    assert.deepEqual(await inventory.count(), { available: 1, pending: 0, sold: 1 });
    assert.equal(reads(), 2);
  });

  it('keeps its answer across a commit that changed no pet, and drops it for one that does not say what it changed', async () => {
    const { inventory, reads, commit } = fixture();
    await inventory.count();
    commit({ last: 2, changes: [{ table: 'orders', id: 1, statuses: [] }] }, 0);
    await inventory.count();
    assert.equal(reads(), 1);
    commit({ last: 3 }, 5);
    assert.deepEqual(await inventory.count(), { available: 1, pending: 0, sold: 5 });
    assert.equal(reads(), 2);
  });

  it('holds the answer\'s body only while its counts hold: none before the first read, none after a commit that changed a pet', async () => {
    const { inventory, reads, commit } = fixture();
    assert.equal(await inventory.body(), undefined);
    await inventory.count();
    assert.equal(String(await inventory.body()), '{"available":1,"pending":0,"sold":0}');
    commit({ last: 2, changes: [{ table: 'pets', id: 1, statuses: ['available', 'sold'] }] }, 1);
    assert.equal(await inventory.body(), undefined);
    await inventory.count();
    assert.equal(String(await inventory.body()), '{"available":1,"pending":0,"sold":1}');
    assert.equal(reads(), 2);
  });
});
