import assert from 'node:assert/strict';
import { startServiceProcess } from './service-process.ts';
import type { ServiceProcess } from './service-process.ts';

export const RACE_KEY = 'orders-race-key-0123456789';
const CLIENTS = 40;

/**
 * Two service processes on one database (`environment`), then, `rounds` times: one available pet, and
 * forty clients ordering it at once through both. Exactly one order is placed (201), every other
 * client is told 409 `pet_not_available`, and the pet is pending, held by that order.
 */
export async function raceForOnePet(environment: Record<string, string>, rounds: number): Promise<void> {
  const services: ServiceProcess[] = [];
  try {
    services.push(startServiceProcess({ ...environment, PETSTORE_API_KEYS: RACE_KEY }));
    const first = await services[0]!.listening;
    services.push(startServiceProcess({ ...environment, PETSTORE_API_KEYS: RACE_KEY }));
    const bases = [first, await services[1]!.listening];
    const headers = { authorization: `Bearer ${RACE_KEY}`, 'content-type': 'application/json' };
    for (let round = 0; round < rounds; round++) {
      const created = await fetch(`${bases[round % 2]}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: `wanted ${round}`, categoryId: 1, status: 'available' }) });
      const pet = (await created.json()) as { id: number };
      const answers = await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
        const response = await fetch(`${bases[client % 2]}/store/orders`, { method: 'POST', headers, body: JSON.stringify({ petId: pet.id }) });
        const body = (await response.json()) as { id?: number; code?: string };
        return { status: response.status, body, position: response.headers.get('petstore-position') };
      }));
      const placed = answers.filter((answer) => answer.status === 201);
      assert.equal(placed.length, 1, `round ${round}: ${placed.length} orders placed for one pet`);
      assert.deepEqual(answers.filter((answer) => answer.status !== 201).map((answer) => `${answer.status} ${answer.body.code}`),
        Array.from({ length: CLIENTS - 1 }, () => '409 pet_not_available'), `round ${round}`);
      for (const base of bases) {
        const read = { authorization: headers.authorization, 'petstore-min-position': placed[0]!.position! };
        const orders = (await (await fetch(`${base}/store/orders?petId=${pet.id}`, { headers: read })).json()) as { id: number }[];
        assert.deepEqual(orders.map((order) => order.id), [placed[0]!.body.id]);
        assert.equal(((await (await fetch(`${base}/pets/${pet.id}`, { headers: read })).json()) as { status: string }).status, 'pending');
      }
    }
  } finally {
    for (const service of services) {
      service.signal('SIGTERM');
      await service.exited;
      service.cleanup();
    }
  }
}
