import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPetStoreClient } from 'petstore/client';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

const KEY = 'positions-key-0123456789abcdef';
const ROUNDS = 200;

/** Two service processes on one SQLite file: what is written through one is read through the other, with its position. */
describe('reads at least as new as a write, across processes', () => {
  it(`a write through A is in the next listing and lookup through B, when B is sent its position, ${ROUNDS} times`, async () => {
    const directory = temporaryDirectory('positions');
    const environment = { PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY };
    const services: ServiceProcess[] = [];
    try {
      services.push(startServiceProcess(environment));
      const writer = await services[0]!.listening;
      services.push(startServiceProcess(environment));
      const reader = await services[1]!.listening;
      const headers = { authorization: `Bearer ${KEY}` };
      const misses: string[] = [];
      let lastId = 0;
      for (let round = 0; round < ROUNDS; round++) {
        // B caches the page that the next pet will land on, empty, before A writes it.
        const page = `${reader}/pets?after=${lastId}&limit=1`;
        assert.deepEqual(await (await fetch(page, { headers })).json(), []);
        const created = await fetch(`${writer}/pets`, {
          method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: `pet ${round}`, categoryId: 1 }),
        });
        assert.equal(created.status, 201);
        const { id } = (await created.json()) as { id: number };
        const atLeast = { ...headers, 'petstore-min-position': created.headers.get('petstore-position')! };
        const listed = (await (await fetch(page, { headers: atLeast })).json()) as { id: number }[];
        if (listed[0]?.id !== id) misses.push(`round ${round}: listing ${JSON.stringify(listed)} misses pet ${id}`);
        const lookedUp = await fetch(`${reader}/pets/${id}`, { headers: atLeast });
        if (lookedUp.status !== 200) misses.push(`round ${round}: pet ${id} is ${lookedUp.status}`);
        lastId = id;
      }
      assert.deepEqual(misses, []);

      // The typed client does the same by itself: one client's position handed to a client of the other instance.
      const throughA = createPetStoreClient({ baseUrl: writer, apiKey: KEY });
      const pet = await throughA.createPet({ name: 'by client', categoryId: 2 });
      const throughB = createPetStoreClient({ baseUrl: reader, apiKey: KEY, minPosition: throughA.position, onDeprecation: () => undefined });
      assert.deepEqual(await throughB.listPets({ after: pet.id - 1, limit: 1 }), [pet]);
      assert.deepEqual((await throughB.getPet(pet.id)).pet, pet);
    } finally {
      for (const service of services) {
        service.signal('SIGTERM');
        await service.exited;
        service.cleanup();
      }
      directory.remove();
    }
  });
});
