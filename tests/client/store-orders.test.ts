import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPetStoreClient, PetStoreError } from 'petstore/client';
import type { PetStoreClient } from 'petstore/client';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

describe('client store methods against the service: place, list, get, approve, deliver, cancel, inventory', () => {
  let api: TestService;
  let client: PetStoreClient;
  before(async () => {
    api = await startTestService();
    client = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
  });
  after(() => api.stop());

  it('takes an order from placed to delivered, the pet sold, and reads it back', async () => {
    const pet = await client.createPet({ name: 'Rex', categoryId: 1, status: 'available' });
    const before = await client.inventory();
    const placed = await client.placeOrder({ petId: pet.id, shipDate: '2026-12-24T10:00:00Z' });
    assert.deepEqual([placed.order.status, placed.etag], ['placed', '"1"']);
    assert.deepEqual(await client.getOrder(placed.order.id), placed);
    const approved = await client.approveOrder(placed.order.id, { ifMatch: placed.etag });
    const delivered = await client.deliverOrder(placed.order.id, { ifMatch: approved.etag });
    assert.deepEqual([delivered.order.status, delivered.order.complete], ['delivered', true]);
    assert.equal((await client.getPet(pet.id)).pet.status, 'sold');
    assert.deepEqual(await client.listOrders({ petId: pet.id }), [delivered.order]);
    assert.deepEqual(await client.inventory(), { ...before, available: before.available - 1, sold: before.sold + 1 });
  });

  it('cancels twice without error, freeing the pet; a stale version is a PetStoreError 412', async () => {
    const pet = await client.createPet({ name: 'Bo', categoryId: 1, status: 'available' });
    const { order, etag } = await client.placeOrder({ petId: pet.id });
    await assert.rejects(client.approveOrder(order.id, { ifMatch: '"9"' }), (error: unknown) => error instanceof PetStoreError && error.status === 412);
    await client.cancelOrder(order.id, { ifMatch: etag });
    await client.cancelOrder(order.id);
    assert.equal((await client.getOrder(order.id)).order.status, 'cancelled');
    assert.equal((await client.getPet(pet.id)).pet.status, 'available');
  });
});
