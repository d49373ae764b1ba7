import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { checkHistory } from '../../tools/check-history/check.ts';
import { added, historyText } from './hand-made-history.ts';
import type { Served, Step } from './hand-made-history.ts';

const SOURCE = 'http://history.test/v1';

function served(position: number, subject: string, type: string, data: Record<string, unknown>): Served {
  return { specversion: '1.0', id: String(position), source: SOURCE, type, subject, time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json', data };
}
const order = (position: number, id: number, type: keyof typeof CLOUD_EVENT_TYPES, data: Record<string, unknown> = {}) =>
  served(position, `store/orders/${id}`, CLOUD_EVENT_TYPES[type], { id, ...data });
const pet = (position: number, id: number, from: string | null, to: string, orderId?: number) =>
  served(position, `pets/${id}`, CLOUD_EVENT_TYPES.PetStatusChanged, { id, from, to, ...(orderId === undefined ? {} : { orderId }) });

/**
 * A clean store over two pets: order 1 takes Rex (placed, approved, delivered: Rex sold), order 2 takes
 * Kit and is cancelled (Kit available again), order 3 takes Kit again; each order's event beside its
 * pet's, as one commit writes them.
 */
function cleanStoreLog(): Served[] {
  return [
    added(1, 1, 'Rex', 1, 'available'),
    added(2, 2, 'Kit', 2, 'available'),
    order(3, 1, 'OrderPlaced', { petId: 1, shipDate: null }), pet(4, 1, 'available', 'pending', 1),
    order(5, 2, 'OrderPlaced', { petId: 2, shipDate: null }), pet(6, 2, 'available', 'pending', 2),
    order(7, 1, 'OrderApproved'),
    order(8, 2, 'OrderCancelled'), pet(9, 2, 'pending', 'available', 2),
    order(10, 1, 'OrderDelivered'), pet(11, 1, 'pending', 'sold', 1),
    order(12, 3, 'OrderPlaced', { petId: 2, shipDate: null }), pet(13, 2, 'available', 'pending', 3),
  ];
}

function storeSteps(log: readonly Served[], inventories: readonly Step[] = []): Step[] {
  return [
    { process: 'a', f: 'create', invoke: { name: 'Rex', categoryId: 1, status: 'available' }, outcome: 'ok', value: { id: 1, position: 1 } },
    { process: 'b', f: 'create', invoke: { name: 'Kit', categoryId: 2, status: 'available' }, outcome: 'ok', value: { id: 2, position: 2 } },
    { process: 'a', f: 'order', invoke: { petId: 1 }, outcome: 'ok', value: { id: 1, position: 4 } },
    { process: 'b', f: 'order', invoke: { petId: 1 }, outcome: 'fail', value: { code: 'pet_not_available' } },
    { process: 'b', f: 'order', invoke: { petId: 2 }, outcome: 'ok', value: { id: 2, position: 6 } },
    { process: 'a', f: 'move-order', invoke: { id: 1, status: 'approved' }, outcome: 'ok', value: {} },
    { process: 'b', f: 'move-order', invoke: { id: 2, status: 'cancelled' }, outcome: 'ok', value: {} },
    { process: 'c', f: 'inventory', invoke: { minPosition: 9 }, outcome: 'ok', value: { available: 1, pending: 1, sold: 0 } },
    { process: 'a', f: 'move-order', invoke: { id: 1, status: 'delivered' }, outcome: 'info', value: { error: 'timeout' } },
    { process: 'b', f: 'order', invoke: { petId: 2 }, outcome: 'ok', value: { id: 3, position: 13 } },
    ...inventories,
    { process: 'log', f: 'log', invoke: {}, outcome: 'ok', value: { events: log } },
  ];
}

function anomalies(steps: readonly Step[]): string[] {
  return Object.keys(checkHistory(historyText(steps)).anomalies);
}

describe('history checker: store orders', () => {
  it('finds nothing in a clean history of orders, inventory reads and the log holding both aggregates', () => {
    assert.deepEqual(checkHistory(historyText(storeSteps(cleanStoreLog()))).anomalies, {});
  });

  it('names a pet held by two live orders (order-double-hold)', () => {
    const log = cleanStoreLog();
    // Order 3 takes Kit while order 2 still holds it: order 2 was never cancelled.
    const doubled = log.filter((event) => !['8', '9'].includes(event.id as string)).map((event) => (event.id === '13' ? pet(13, 2, 'pending', 'pending', 3) : event));
    assert.ok(anomalies(storeSteps(doubled)).includes('order-double-hold'));
  });

  it('names an order placed for a sold pet (order-unavailable-pet): a sold pet reserved', () => {
    const log = [...cleanStoreLog(), order(14, 4, 'OrderPlaced', { petId: 1, shipDate: null })];
    assert.deepEqual(anomalies(storeSteps(log)), ['order-unavailable-pet']);
    // With the pet moved back to pending for it, the pet's own rules are broken too.
    const moved = [...log, pet(15, 1, 'sold', 'pending', 4)];
    assert.deepEqual(anomalies(storeSteps(moved)).sort(), ['invalid-transition', 'order-unavailable-pet']);
  });

  it('names a delivered order whose pet is not sold (order-delivered-unsold)', () => {
    const log = cleanStoreLog().filter((event) => event.id !== '11');
    assert.deepEqual(anomalies(storeSteps(log)), ['order-delivered-unsold']);
  });

  it('names a cancelled order whose pet stays reserved (order-cancelled-reserved)', () => {
    const log = cleanStoreLog().filter((event) => !['9', '12', '13'].includes(event.id as string));
    const steps = storeSteps(log).filter((step) => !(step.f === 'order' && step.value?.id === 3));
    const inventoryAt9 = steps.findIndex((step) => step.f === 'inventory');
    steps[inventoryAt9] = { ...steps[inventoryAt9]!, invoke: { minPosition: 8 }, value: { available: 0, pending: 2, sold: 0 } };
    assert.deepEqual(anomalies(steps), ['order-cancelled-reserved']);
  });

  it('takes a change that found the status an order already set for a change that wrote nothing (no realtime-order)', () => {
    // Tom reserved and freed by order 4; later Bo is added; then a change of Tom to available finds it so, and answers the freeing's position.
    const log = [
      ...cleanStoreLog(), added(14, 3, 'Tom', 1, 'available'), order(15, 4, 'OrderPlaced', { petId: 3, shipDate: null }), pet(16, 3, 'available', 'pending', 4),
      order(17, 4, 'OrderCancelled'), pet(18, 3, 'pending', 'available', 4), added(19, 4, 'Bo', 1, null),
    ];
    const steps = storeSteps(log, [
      { process: 'd', f: 'create', invoke: { name: 'Tom', categoryId: 1, status: 'available' }, outcome: 'ok', value: { id: 3, position: 14 } },
      { process: 'd', f: 'order', invoke: { petId: 3 }, outcome: 'ok', value: { id: 4, position: 16 } },
      { process: 'd', f: 'move-order', invoke: { id: 4, status: 'cancelled' }, outcome: 'ok', value: {} },
      { process: 'd', f: 'create', invoke: { name: 'Bo', categoryId: 1 }, outcome: 'ok', value: { id: 4, position: 19 } },
      { process: 'd', f: 'set-status', invoke: { id: 3, status: 'available' }, outcome: 'ok', value: { version: 3, position: 18 } },
    ]);
    assert.deepEqual(anomalies(steps), []);
  });

  it('names an inventory read that no state of the log from its position on had (inventory-not-fold), and accepts any later state', () => {
    const later: Step = { process: 'c', f: 'inventory', invoke: { minPosition: 4 }, outcome: 'ok', value: { available: 0, pending: 1, sold: 1 } };
    assert.deepEqual(anomalies(storeSteps(cleanStoreLog(), [later])), [], 'a later state (after position 13) is as good');
    const stale: Step = { process: 'c', f: 'inventory', invoke: { minPosition: 11 }, outcome: 'ok', value: { available: 2, pending: 0, sold: 0 } };
    assert.deepEqual(anomalies(storeSteps(cleanStoreLog(), [stale])), ['inventory-not-fold']);
    const never: Step = { process: 'c', f: 'inventory', invoke: {}, outcome: 'ok', value: { available: 3, pending: 0, sold: 0 } };
    assert.deepEqual(anomalies(storeSteps(cleanStoreLog(), [never])), ['inventory-not-fold']);
  });
});
