import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PetRuleViolation } from '../../domain/index.ts';
import { addPet, getPet, InvalidPetQuery, listPets, PetNotFound } from '../../application/index.ts';
import { createInMemoryPetStore } from '../../adapters/memory/in-memory-pet-store.ts';

const fixedClock = { now: () => new Date('2026-11-22T10:00:00.000Z') };

describe('use cases, headless with in-memory adapters', () => {
  it('addPet assigns increasing ids and records PetAdded with its metadata', async () => {
    const store = createInMemoryPetStore({ clock: fixedClock });
    const first = await addPet(store, { name: 'Rex', categoryId: 1 }, { requestId: 'r1', apiKeyId: 'k1' });
    const second = await addPet(store, { name: 'Tom', categoryId: 2, status: 'sold' });
    assert.deepEqual(first, { id: 1, name: 'Rex', categoryId: 1 });
    assert.deepEqual(second, { id: 2, name: 'Tom', categoryId: 2, status: 'sold' });
    assert.equal(store.log.length, 2);
    assert.deepEqual(store.log[0], {
      position: 1,
      streamId: 'pet-1',
      streamVersion: 1,
      event: { type: 'PetAdded', data: first },
      metadata: { schemaVersion: 1, recordedAt: '2026-11-22T10:00:00.000Z', requestId: 'r1', apiKeyId: 'k1' },
    });
  });

  it('addPet refuses a pet that breaks an invariant and records nothing', async () => {
    const store = createInMemoryPetStore();
    await assert.rejects(addPet(store, { name: ' ', categoryId: 1 }), PetRuleViolation);
    assert.equal(store.log.length, 0);
    assert.deepEqual(await listPets(store), []);
  });

  it('addPet draws no id for a refused pet', async () => {
    const store = createInMemoryPetStore();
    await assert.rejects(addPet(store, { name: 'Rex', categoryId: 0 }), PetRuleViolation);
    await assert.rejects(addPet(store, { name: 'Rex', categoryId: 1, status: 'lost' }), PetRuleViolation);
    assert.equal((await addPet(store, { name: 'Rex', categoryId: 1 })).id, 1);
  });

  it('listPets returns pets in id order, filtered and limited', async () => {
    const store = createInMemoryPetStore();
    const statuses = ['available', 'pending', undefined, 'available', 'sold'] as const;
    for (const [index, status] of statuses.entries()) {
      await addPet(store, status ? { name: `pet ${index}`, categoryId: 1, status } : { name: `pet ${index}`, categoryId: 1 });
    }
    assert.deepEqual((await listPets(store)).map((pet) => pet.id), [1, 2, 3, 4, 5]);
    assert.deepEqual((await listPets(store, { status: 'available' })).map((pet) => pet.id), [1, 4]);
    assert.deepEqual((await listPets(store, { limit: 2 })).map((pet) => pet.id), [1, 2]);
    assert.deepEqual((await listPets(store, { status: 'sold', limit: 1 })).map((pet) => pet.id), [5]);
  });

  it('listPets uses a default limit of 20', async () => {
    const store = createInMemoryPetStore();
    for (let index = 0; index < 25; index++) await addPet(store, { name: `pet ${index}`, categoryId: 1 });
    assert.equal((await listPets(store)).length, 20);
  });

  for (const limit of [0, 101, 1.5, -1]) {
    it(`listPets refuses the limit ${limit}`, async () => {
      await assert.rejects(listPets(createInMemoryPetStore(), { limit }), InvalidPetQuery);
    });
  }

  it('listPets refuses an unknown status', async () => {
    await assert.rejects(listPets(createInMemoryPetStore(), { status: 'lost' as never }), InvalidPetQuery);
  });

  it('getPet finds a pet by id and reports a missing one', async () => {
    const store = createInMemoryPetStore();
    const rex = await addPet(store, { name: 'Rex', categoryId: 1 });
    assert.deepEqual(await getPet(store, rex.id), rex);
    await assert.rejects(getPet(store, 99), PetNotFound);
  });
});
