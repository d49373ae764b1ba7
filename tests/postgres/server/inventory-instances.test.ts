import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from '../../support/postgres.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';

const KEY = 'inventory-instances-key-0123456789';

describe('the cached inventory across instances on one PostgreSQL database', () => {
  it('counts, through one instance, every write acknowledged through the other before the read was sent', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    const services: ServiceProcess[] = [];
    try {
      const environment = { PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: KEY };
      services.push(startServiceProcess(environment));
      const writer = await services[0]!.listening;
      services.push(startServiceProcess(environment));
      const reader = await services[1]!.listening;
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
      const post = async (path: string, body: unknown) => {
        const response = await fetch(`${writer}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
        assert.equal(response.status, 201, await response.clone().text());
        return (await response.json()) as { id: number };
      };
      const inventory = async () => {
        const response = await fetch(`${reader}/store/inventory`, { headers });
        assert.equal(response.status, 200);
        return response.json();
      };
      const expected = { available: 0, pending: 0, sold: 0 };
      for (let round = 0; round < 10; round++) {
        // Twice: the second is answered from the reader's cache, which the other instance's next write must drop.
        assert.deepEqual(await inventory(), expected);
        assert.deepEqual(await inventory(), expected);
        const pet = await post('/pets', { name: `pet-${round}`, categoryId: 1, status: 'available' });
        expected.available += 1;
        assert.deepEqual(await inventory(), expected, `round ${round}: after a creation`);
        assert.deepEqual(await inventory(), expected);
        if (round % 2 === 0) {
          await post('/store/orders', { petId: pet.id });
          expected.available -= 1;
          expected.pending += 1;
          assert.deepEqual(await inventory(), expected, `round ${round}: after a placement`);
        }
      }
    } finally {
      for (const service of services) service.cleanup();
      await database.drop();
    }
  });
});
