import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IllegalOrderTransition, PetNotAvailable, PetReserved, UnknownPet } from '../../domain/index.ts';
import {
  addPet, changePetStatus, getInventory, getOrder, getPet, IdempotencyKeyReused, listOrderPage, moveOrder, OrderNotFound, placeOrder, VersionMismatch,
} from '../../application/index.ts';
import type { Commits, EventLog, OrderPorts, PetStorePorts } from '../../application/index.ts';

export interface OrderContractSubject {
  readonly ports: PetStorePorts & OrderPorts & { readonly eventLog: EventLog; readonly commits: Commits };
  close(): Promise<void>;
}

/** What every store must do for store orders: decisions across an order's stream and its pet's, all or nothing. */
export function orderStoreContract(name: string, open: () => Promise<OrderContractSubject>): void {
  describe(`order store contract: ${name}`, () => {
    let subject: OrderContractSubject;
    let ports: OrderContractSubject['ports'];
    const available = () => addPet(ports, { name: 'Rex', categoryId: 1, status: 'available' });

    before(async () => {
      subject = await open();
      ports = subject.ports;
    });
    after(() => subject.close());

    it('places an order and reserves its pet in one commit', async () => {
      const pet = await available();
      const placed = await placeOrder(ports, { petId: pet.id, shipDate: '2026-12-24T10:00:00+01:00' });
      assert.deepEqual(placed.order, { id: placed.order.id, petId: pet.id, status: 'placed', shipDate: '2026-12-24T10:00:00+01:00', complete: false });
      const events = await ports.eventLog.readLog({ after: placed.position - 2, limit: 10 });
      assert.deepEqual(events.map((stored) => [stored.streamId, stored.event.type]), [[`order-${placed.order.id}`, 'OrderPlaced'], [`pet-${pet.id}`, 'PetStatusChanged']]);
      assert.equal(events.at(-1)?.position, placed.position);
      assert.deepEqual(await getOrder(ports, placed.order.id), { order: placed.order, version: 1 });
      assert.equal((await getPet(ports, pet.id)).pet.status, 'pending');
    });

    it('refuses a pet that is not available or does not exist, drawing no order id', async () => {
      const pet = await available();
      const first = await placeOrder(ports, { petId: pet.id });
      await assert.rejects(placeOrder(ports, { petId: pet.id }), PetNotAvailable);
      const unsold = await addPet(ports, { name: 'No status', categoryId: 1 });
      await assert.rejects(placeOrder(ports, { petId: unsold.id }), PetNotAvailable);
      await assert.rejects(placeOrder(ports, { petId: 9_000_000_000 }), UnknownPet);
      const next = await placeOrder(ports, { petId: (await available()).id });
      assert.equal(next.order.id, first.order.id + 1, 'the refused orders took no id');
    });

    it('gives one pet to exactly one of many concurrent orders', async () => {
      const pet = await available();
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => placeOrder(ports, { petId: pet.id })));
      const placed = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      assert.equal(placed.length, 1);
      for (const outcome of outcomes) if (outcome.status === 'rejected') assert.ok(outcome.reason instanceof PetNotAvailable, String(outcome.reason));
      const held = await listOrderPage(ports, { petId: pet.id });
      assert.equal(held.orders.length, 1);
    });

    it('approves, then delivers, selling the pet in the same commit; nothing moves a delivered order', async () => {
      const pet = await available();
      const { order } = await placeOrder(ports, { petId: pet.id });
      await assert.rejects(moveOrder(ports, { id: order.id, to: 'delivered' }), IllegalOrderTransition);
      const approved = await moveOrder(ports, { id: order.id, to: 'approved' });
      assert.deepEqual([approved.order.status, approved.version], ['approved', 2]);
      assert.equal((await getPet(ports, pet.id)).pet.status, 'pending');
      const delivered = await moveOrder(ports, { id: order.id, to: 'delivered' });
      assert.deepEqual([delivered.order.status, delivered.order.complete, delivered.version], ['delivered', true, 3]);
      assert.equal((await getPet(ports, pet.id)).pet.status, 'sold');
      const [last] = await ports.eventLog.readLog({ after: delivered.position - 1, limit: 1 });
      assert.deepEqual(last?.event, { type: 'PetStatusChanged', data: { id: pet.id, from: 'pending', to: 'sold', orderId: order.id } });
      await assert.rejects(moveOrder(ports, { id: order.id, to: 'cancelled' }), IllegalOrderTransition);
      assert.equal((await moveOrder(ports, { id: order.id, to: 'delivered' })).version, 3, 'delivered again: nothing recorded');
    });

    it('cancels, freeing the pet in the same commit; again records nothing', async () => {
      const pet = await available();
      const { order } = await placeOrder(ports, { petId: pet.id });
      const cancelled = await moveOrder(ports, { id: order.id, to: 'cancelled' });
      assert.deepEqual([cancelled.order.status, cancelled.order.complete], ['cancelled', false]);
      assert.equal((await getPet(ports, pet.id)).pet.status, 'available');
      const again = await moveOrder(ports, { id: order.id, to: 'cancelled' });
      assert.equal(again.version, cancelled.version);
      await assert.rejects(moveOrder(ports, { id: 9_000_000_000, to: 'cancelled' }), OrderNotFound);
      const second = await placeOrder(ports, { petId: pet.id });
      assert.equal(second.order.status, 'placed', 'a freed pet can be ordered again');
    });

    it('keeps a reserved pet for its order: its own status changes are refused until the order lets go', async () => {
      const pet = await available();
      const { order } = await placeOrder(ports, { petId: pet.id });
      await assert.rejects(changePetStatus(ports, { id: pet.id, status: 'sold' }), PetReserved);
      await assert.rejects(changePetStatus(ports, { id: pet.id, status: 'pending' }), PetReserved);
      await moveOrder(ports, { id: order.id, to: 'cancelled' });
      assert.equal((await changePetStatus(ports, { id: pet.id, status: 'sold' })).pet.status, 'sold');
    });

    it('refuses a move at a version the order is not at', async () => {
      const { order } = await placeOrder(ports, { petId: (await available()).id });
      await assert.rejects(moveOrder(ports, { id: order.id, to: 'approved', ifVersion: [2] }), VersionMismatch);
      assert.equal((await moveOrder(ports, { id: order.id, to: 'approved', ifVersion: [1] })).version, 2);
    });

    it('answers a repeated keyed order as the first, and refuses the key with another body', async () => {
      const pet = await available();
      const first = await placeOrder(ports, { petId: pet.id }, { apiKeyId: 'k' }, { idempotencyKey: 'once' });
      const again = await placeOrder(ports, { petId: pet.id }, { apiKeyId: 'k' }, { idempotencyKey: 'once' });
      assert.deepEqual(again.order, first.order);
      await assert.rejects(placeOrder(ports, { petId: pet.id, shipDate: '2027-01-01T00:00:00Z' }, { apiKeyId: 'k' }, { idempotencyKey: 'once' }), IdempotencyKeyReused);
    });

    it('lists orders in id order by status and by pet, a page at a time', async () => {
      const pets = [await available(), await available(), await available()];
      const orders = [];
      for (const pet of pets) orders.push((await placeOrder(ports, { petId: pet.id })).order);
      await moveOrder(ports, { id: orders[1]!.id, to: 'approved' });
      const first = await listOrderPage(ports, { after: orders[0]!.id - 1, limit: 2 });
      assert.deepEqual(first.orders.map((order) => order.id), [orders[0]!.id, orders[1]!.id]);
      assert.equal(first.nextAfter, orders[1]!.id);
      const approved = await listOrderPage(ports, { status: 'approved', after: orders[0]!.id - 1 });
      assert.deepEqual(approved.orders.map((order) => order.id), [orders[1]!.id]);
      assert.deepEqual((await listOrderPage(ports, { petId: pets[2]!.id })).orders, [orders[2]]);
    });

    it('counts the pets by status, exactly', async () => {
      const before = await getInventory(ports);
      const pet = await available();
      await addPet(ports, { name: 'none', categoryId: 1 });
      const { order } = await placeOrder(ports, { petId: pet.id });
      await moveOrder(ports, { id: order.id, to: 'approved' });
      await moveOrder(ports, { id: order.id, to: 'delivered' });
      await available();
      assert.deepEqual(await getInventory(ports), { available: before.available + 1, pending: before.pending, sold: before.sold + 1 });
    });
  });
}
