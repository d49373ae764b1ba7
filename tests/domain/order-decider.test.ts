import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decide, decideOrder, evolve, evolveOrder, IllegalOrderTransition, initialOrderState, initialState, PetNotAvailable, PetReserved, UnknownPet,
} from '../../domain/index.ts';
import type { OrderCommand, OrderDecision, OrderEvent, PetEvent, PetStatus } from '../../domain/index.ts';

/** given the order's past events and its pet's, when a command, then the events of both (or an error). */
function given(orderEvents: OrderEvent[], petEvents: PetEvent[]) {
  const order = orderEvents.reduce(evolveOrder, initialOrderState());
  const pet = petEvents.reduce(evolve, initialState());
  return {
    when: (command: OrderCommand) => ({
      then: (expected: OrderDecision) => assert.deepEqual(decideOrder(command, order, pet), expected),
      thenRejects: (error: new (...args: never[]) => Error) => assert.throws(() => decideOrder(command, order, pet), error),
    }),
  };
}

const added = (status: PetStatus | null): PetEvent => ({ type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: 1, status } });
const reserved: PetEvent = { type: 'PetStatusChanged', data: { id: 7, from: 'available', to: 'pending', orderId: 3 } };
const placed: OrderEvent = { type: 'OrderPlaced', data: { id: 3, petId: 7, shipDate: null } };
const approved: OrderEvent = { type: 'OrderApproved', data: { id: 3 } };
const place: OrderCommand = { type: 'PlaceOrder', data: { id: 3, petId: 7, shipDate: null } };

describe('Order decider: a decision across the order and its pet', () => {
  it('places an order for an available pet and reserves it for the order', () => {
    given([], [added('available')]).when(place).then({ order: [placed], pet: [reserved] });
  });

  for (const status of ['pending', 'sold', null] as const) {
    it(`refuses a pet that is ${status ?? 'without a status'}`, () => given([], [added(status)]).when(place).thenRejects(PetNotAvailable));
  }

  it('refuses a pet that does not exist', () => given([], []).when(place).thenRejects(UnknownPet));

  it('approves a placed order, touching no pet; approving again decides nothing', () => {
    given([placed], [added('available'), reserved]).when({ type: 'ApproveOrder', data: { id: 3 } }).then({ order: [approved], pet: [] });
    given([placed, approved], [added('available'), reserved]).when({ type: 'ApproveOrder', data: { id: 3 } }).then({ order: [], pet: [] });
  });

  it('delivers an approved order and sells the pet; a placed one cannot be delivered', () => {
    given([placed, approved], [added('available'), reserved]).when({ type: 'DeliverOrder', data: { id: 3 } }).then({
      order: [{ type: 'OrderDelivered', data: { id: 3 } }], pet: [{ type: 'PetStatusChanged', data: { id: 7, from: 'pending', to: 'sold', orderId: 3 } }],
    });
    given([placed], [added('available'), reserved]).when({ type: 'DeliverOrder', data: { id: 3 } }).thenRejects(IllegalOrderTransition);
  });

  it('cancels a placed order and frees the pet; a delivered one cannot be cancelled', () => {
    given([placed], [added('available'), reserved]).when({ type: 'CancelOrder', data: { id: 3 } }).then({
      order: [{ type: 'OrderCancelled', data: { id: 3 } }], pet: [{ type: 'PetStatusChanged', data: { id: 7, from: 'pending', to: 'available', orderId: 3 } }],
    });
    given([placed, approved, { type: 'OrderDelivered', data: { id: 3 } }], [added('available'), reserved]).when({ type: 'CancelOrder', data: { id: 3 } }).thenRejects(IllegalOrderTransition);
  });

  it('keeps the pet for its order: the pet refuses its own status changes while held, and takes them once freed', () => {
    const held = [added('available'), reserved].reduce(evolve, initialState());
    assert.throws(() => decide({ type: 'ChangePetStatus', data: { id: 7, status: 'sold' } }, held), PetReserved);
    const freed = evolve(held, { type: 'PetStatusChanged', data: { id: 7, from: 'pending', to: 'available', orderId: 3 } });
    assert.equal(decide({ type: 'ChangePetStatus', data: { id: 7, status: 'sold' } }, freed).length, 1);
  });
});
