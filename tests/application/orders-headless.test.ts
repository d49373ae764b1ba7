import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, getInventory, moveOrder, placeOrder } from '../../application/index.ts';
import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';

describe('the order use cases, headless', () => {
  it('place, deliver and count in a few lines, over the in-memory store', async () => {
    const store = createInMemoryPetStore();
    const pet = await addPet(store, { name: 'Rex', categoryId: 1, status: 'available' });
    const { order } = await placeOrder(store, { petId: pet.id });
    await moveOrder(store, { id: order.id, to: 'approved' });
    await moveOrder(store, { id: order.id, to: 'delivered' });
    assert.deepEqual(await getInventory(store), { available: 0, pending: 0, sold: 1 });
  });
});
