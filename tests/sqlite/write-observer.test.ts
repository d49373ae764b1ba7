import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addPet, changePetStatus } from '../../application/index.ts';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import type { BatchTiming } from '../../adapters/store/write/write-observer.ts';
import { appendPet } from '../support/append-as-use-case.ts';

/** What tracing learns from SQLite's group commit: each write's group, told to the context that asked for the write. */

describe('SQLite group commit, observed', () => {
  let directory: string;
  let store: SqlitePetStore;
  const caller = new AsyncLocalStorage<string>();
  const observed: { caller: string | undefined; group: BatchTiming }[] = [];

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-observed-'));
    store = await openSqlitePetStore(join(directory, 'store.db'), {
      observeWrite: () => {
        const who = caller.getStore();
        return (group) => observed.push({ caller: who, group });
      },
    });
  });
  after(async () => {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('tells each write of a group, in its caller\'s context, the group\'s size and when it ran', async () => {
    const pet = await addPet(store, { name: 'first', categoryId: 1 });
    observed.length = 0;
    const startedBefore = performance.now();
    await Promise.all([
      caller.run('create a', () => addPet(store, { name: 'a', categoryId: 1 })),
      caller.run('create b', () => addPet(store, { name: 'b', categoryId: 1 })),
      caller.run('change', () => changePetStatus(store, { id: pet.id, status: 'sold' })),
    ]);
    // The change reads its stream first, so it may land in a group of its own.
    const creations = observed.filter((each) => each.caller?.startsWith('create'));
    assert.deepEqual(creations.map((each) => each.caller).sort(), ['create a', 'create b']);
    assert.equal(creations[0]!.group, creations[1]!.group, 'one group for the creations of one turn');
    assert.ok(creations[0]!.group.size >= 2);
    assert.deepEqual(observed.map((each) => each.caller).sort(), ['change', 'create a', 'create b']);
    for (const { group } of observed) assert.ok(startedBefore <= group.began && group.began <= group.committed && group.committed <= performance.now());
  });

  it('counts a write that failed in its group, and tells it too', async () => {
    const pet = await addPet(store, { name: 'contested', categoryId: 1 });
    observed.length = 0;
    const results = await Promise.allSettled([
      caller.run('stale', () => appendPet(store.eventStore, `pet-${pet.id}`, 5, [{ type: 'PetStatusChanged', data: { id: pet.id, from: null, to: 'sold' } }], { recordedAt: new Date().toISOString() }, { petAfter: { ...pet, status: 'sold' } })),
      caller.run('fresh', () => addPet(store, { name: 'fresh', categoryId: 1 })),
    ]);
    assert.deepEqual(results.map((result) => result.status), ['rejected', 'fulfilled']);
    assert.deepEqual(observed.map((each) => [each.caller, each.group.size]).sort(), [['fresh', 2], ['stale', 2]]);
  });
});
