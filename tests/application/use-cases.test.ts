import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IllegalStatusTransition, PetRuleViolation } from '../../domain/index.ts';
import { addPet, changePetStatus, getPet, InvalidPetQuery, listPets, PetNotFound, VersionMismatch } from '../../application/index.ts';
import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';

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
      event: { type: 'PetAdded', data: { ...first, status: null } },
      metadata: { schemaVersion: 2, recordedAt: '2026-11-22T10:00:00.000Z', requestId: 'r1', apiKeyId: 'k1' },
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

  it('changePetStatus follows the status rules and records only real changes', async () => {
    const store = createInMemoryPetStore();
    const rex = await addPet(store, { name: 'Rex', categoryId: 1, status: 'available' });
    assert.deepEqual(await changePetStatus(store, { id: rex.id, status: 'pending' }), { pet: { ...rex, status: 'pending' }, version: 2, position: 2 });
    assert.deepEqual(
      await changePetStatus(store, { id: rex.id, status: 'pending' }),
      { pet: { ...rex, status: 'pending' }, version: 2, position: 2 },
      'a change to the current status answers the position of the last change',
    );
    assert.equal(store.log.length, 2, 'changing to the current status records nothing');
    await changePetStatus(store, { id: rex.id, status: 'sold' });
    await assert.rejects(changePetStatus(store, { id: rex.id, status: 'available' }), IllegalStatusTransition);
    await assert.rejects(changePetStatus(store, { id: 99, status: 'sold' }), PetNotFound);
  });

  it('changePetStatus with a version applies only at that version', async () => {
    const store = createInMemoryPetStore();
    const rex = await addPet(store, { name: 'Rex', categoryId: 1, status: 'available' });
    await assert.rejects(changePetStatus(store, { id: rex.id, status: 'pending', ifVersion: [2] }), VersionMismatch);
    assert.equal((await changePetStatus(store, { id: rex.id, status: 'pending', ifVersion: [1] })).version, 2);
    assert.equal((await changePetStatus(store, { id: rex.id, status: 'sold', ifVersion: '*' })).version, 3);
  });

  it('changePetStatus without a version retries when another writer moved the pet first', async () => {
    const store = createInMemoryPetStore();
    const rex = await addPet(store, { name: 'Rex', categoryId: 1, status: 'available' });
    // Both read version 1; the second append conflicts, retries, and finds nothing left to change.
    const results = await Promise.all([
      changePetStatus(store, { id: rex.id, status: 'pending' }),
      changePetStatus(store, { id: rex.id, status: 'pending' }),
    ]);
    assert.deepEqual(results.map((result) => result.version), [2, 2]);
    assert.equal(store.log.length, 2);
  });

  it('getPet finds a pet by id and reports a missing one', async () => {
    const store = createInMemoryPetStore();
    const rex = await addPet(store, { name: 'Rex', categoryId: 1 });
    assert.deepEqual(await getPet(store, rex.id), { pet: rex, version: 1 });
    await assert.rejects(getPet(store, 99), PetNotFound);
  });
});
