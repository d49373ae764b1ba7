import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { koaContextsDuring } from '../support/koa-contexts.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** What a client can see of an answer, less what differs on every request (its id and date). */
async function visible(response: Response) {
  const headers = [...response.headers].filter(([name]) => name !== 'x-request-id' && name !== 'date');
  return { status: response.status, headers, body: await response.text() };
}

const inventoryOf = async (api: TestService) => (await (await api.request('/v1/store/inventory')).json()) as Record<string, number>;

describe('the inventory answered by the pipeline\'s cached branch', () => {
  it('is answered without a Koa context while its counts hold, with the app\'s status, headers and body', async () => {
    const api = await startTestService();
    try {
      assert.equal((await api.createPet({ name: 'Rex', categoryId: 1, status: 'available' })).status, 201);
      let missed: Response | undefined;
      assert.equal(await koaContextsDuring(async () => void (missed = await api.request('/v1/store/inventory'))), 1);
      let hit: Response | undefined;
      assert.equal(await koaContextsDuring(async () => {
        for (let index = 0; index < 3; index++) hit = await api.request('/v1/store/inventory');
      }), 0);
      assert.deepEqual(await visible(hit!), await visible(missed!));
      assert.equal((await api.request('/v1/store/inventory', { key: null })).status, 401);
    } finally {
      await api.stop();
    }
  });

  it('is exact after every commit that changes a pet: a creation, a placement, a delivery, a cancellation', async () => {
    const api = await startTestService();
    try {
      const post = (path: string, body: unknown) => api.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const expected = { available: 0, pending: 0, sold: 0 };
      assert.deepEqual(await inventoryOf(api), expected);
      const pets: number[] = [];
      for (let index = 0; index < 3; index++) {
        pets.push(((await (await api.createPet({ name: `pet-${index}`, categoryId: 1, status: 'available' })).json()) as { id: number }).id);
        expected.available += 1;
        assert.deepEqual(await inventoryOf(api), expected);
      }
      const orders: number[] = [];
      for (const petId of pets.slice(0, 2)) {
        const placed = await post('/v1/store/orders', { petId });
        assert.equal(placed.status, 201);
        orders.push(((await placed.json()) as { id: number }).id);
        expected.available -= 1;
        expected.pending += 1;
        assert.deepEqual(await inventoryOf(api), expected);
      }
      const move = (id: number, status: string) => api.request(`/v1/store/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status }) });
      assert.equal((await move(orders[0]!, 'approved')).status, 200);
      // An order's own move changes no pet: the count holds.
      assert.deepEqual(await inventoryOf(api), expected);
      assert.equal((await move(orders[0]!, 'delivered')).status, 200);
      expected.pending -= 1;
      expected.sold += 1;
      assert.deepEqual(await inventoryOf(api), expected);
      assert.equal((await api.request(`/v1/store/orders/${orders[1]}`, { method: 'DELETE' })).status, 204);
      expected.pending -= 1;
      expected.available += 1;
      assert.deepEqual(await inventoryOf(api), expected);
    } finally {
      await api.stop();
    }
  });

  it('leaves a read asking for a position it has not seen to the app, which judges it', async () => {
    const api = await startTestService();
    try {
      await inventoryOf(api);
      const created = await api.createPet({ name: 'Later', categoryId: 1, status: 'sold' });
      const ahead = Number(created.headers.get('petstore-position')) + 1;
      const contexts = await koaContextsDuring(async () => {
        const answer = await api.request('/v1/store/inventory', { headers: { 'petstore-min-position': String(ahead) } });
        // Past the log's end: no write was given it.
        assert.equal(answer.status, 400);
      });
      assert.equal(contexts, 1);
      const reached = await api.request('/v1/store/inventory', { headers: { 'petstore-min-position': created.headers.get('petstore-position')! } });
      assert.deepEqual(await reached.json(), { available: 0, pending: 0, sold: 1 });
    } finally {
      await api.stop();
    }
  });
});
