import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from '../../support/postgres.ts';
import { seededRandom } from '../../support/seeded-random.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';

const KEY = 'positions-pg-key-0123456789';
const ROUNDS = 150;

/**
 * Instances on one PostgreSQL database (one of them with two workers): random writes and reads through all
 * of them, each read sent the highest position acknowledged before it was sent, never misses one of those writes.
 */
describe('reads at least as new as a write, across instances on PostgreSQL', () => {
  it(`${ROUNDS} rounds of writes and reads through random instances miss no acknowledged write`, async () => {
    const database = await createTestDatabase();
    const services: ServiceProcess[] = [];
    try {
      const environment = { PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: KEY };
      services.push(startServiceProcess({ ...environment, PETSTORE_WORKERS: '2' }));
      await services[0]!.listening;
      services.push(startServiceProcess(environment), startServiceProcess(environment));
      const bases = await Promise.all(services.map((service) => service.listening));
      const random = seededRandom(15);
      const pick = () => bases[Math.floor(random() * bases.length)]!;
      const headers = { authorization: `Bearer ${KEY}` };
      const written = new Map<number, string>();
      let position = 0;
      const misses: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const name = `pet ${round}`;
        const created = await fetch(`${pick()}/pets`, {
          method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name, categoryId: 1, status: 'available' }),
        });
        assert.equal(created.status, 201);
        const { id } = (await created.json()) as { id: number };
        written.set(id, name);
        position = Math.max(position, Number(created.headers.get('petstore-position')));
        const atLeast = { ...headers, 'petstore-min-position': String(position) };
        const someId = [...written.keys()][Math.floor(random() * written.size)]!;
        const lookedUp = await fetch(`${pick()}/pets/${id}`, { headers: atLeast });
        if (lookedUp.status !== 200) misses.push(`round ${round}: pet ${id} is ${lookedUp.status}`);
        const listed = (await (await fetch(`${pick()}/pets?after=${someId - 1}&limit=1`, { headers: atLeast })).json()) as { id: number }[];
        if (listed[0]?.id !== someId) misses.push(`round ${round}: listing after ${someId - 1} is ${JSON.stringify(listed)}`);
      }
      assert.deepEqual(misses, []);
    } finally {
      for (const service of services) {
        service.signal('SIGTERM');
        await service.exited;
        service.cleanup();
      }
      await database.drop();
    }
  });
});
