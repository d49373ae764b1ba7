import type { PetStatus } from './pet-status.ts';
import type { PetEvent, PetState } from './pet.ts';

export const ORDER_STATUSES = ['placed', 'approved', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export function isOrderStatus(value: unknown): value is OrderStatus {
  return typeof value === 'string' && (ORDER_STATUSES as readonly string[]).includes(value);
}

/** A store order as clients see it: one pet (one animal, so no quantity). `shipDate` is kept as sent. */
export interface Order {
  readonly id: number;
  readonly petId: number;
  readonly status: OrderStatus;
  readonly shipDate?: string;
  /** True once delivered. */
  readonly complete: boolean;
}

/** An order was placed for a pet that was available; the pet is reserved for it in the same commit. */
export type OrderPlaced = {
  readonly type: 'OrderPlaced';
  readonly data: { readonly id: number; readonly petId: number; readonly shipDate: string | null };
};
export type OrderApproved = { readonly type: 'OrderApproved'; readonly data: { readonly id: number } };
/** Delivered: its pet is sold in the same commit. */
export type OrderDelivered = { readonly type: 'OrderDelivered'; readonly data: { readonly id: number } };
/** Cancelled: its pet is available again in the same commit. */
export type OrderCancelled = { readonly type: 'OrderCancelled'; readonly data: { readonly id: number } };

export type OrderEvent = OrderPlaced | OrderApproved | OrderDelivered | OrderCancelled;

export type OrderState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'present'; readonly order: Order };

export function initialOrderState(): OrderState {
  return { kind: 'absent' };
}

export function evolveOrder(state: OrderState, event: OrderEvent): OrderState {
  switch (event.type) {
    case 'OrderPlaced': {
      const { id, petId, shipDate } = event.data;
      return { kind: 'present', order: shipDate === null ? { id, petId, status: 'placed', complete: false } : { id, petId, status: 'placed', shipDate, complete: false } };
    }
    case 'OrderApproved':
      return moved(state, 'approved');
    case 'OrderDelivered':
      return moved(state, 'delivered');
    case 'OrderCancelled':
      return moved(state, 'cancelled');
    default:
      return unreachable(event);
  }
}

function moved(state: OrderState, status: OrderStatus): OrderState {
  if (state.kind === 'absent') return state;
  const { id, petId, shipDate } = state.order;
  const complete = status === 'delivered';
  return { kind: 'present', order: shipDate === undefined ? { id, petId, status, complete } : { id, petId, status, shipDate, complete } };
}

/** The pet an order names does not exist. */
export class UnknownPet extends Error {
  constructor(readonly petId: number) {
    super(`no pet has id ${petId}`);
    this.name = 'UnknownPet';
  }
}

/** The pet is not available (pending, sold, or without a status): it cannot be ordered. */
export class PetNotAvailable extends Error {
  constructor(readonly petId: number, readonly status: PetStatus | undefined) {
    super(`pet ${petId} is ${status ?? 'without a status'}, not available`);
    this.name = 'PetNotAvailable';
  }
}

/** A move the order's life does not allow (placed → approved → delivered; cancel while placed or approved). */
export class IllegalOrderTransition extends Error {
  constructor(readonly from: OrderStatus, readonly to: OrderStatus) {
    super(`an order cannot go from ${from} to ${to}`);
    this.name = 'IllegalOrderTransition';
  }
}

export type PlaceOrder = { readonly type: 'PlaceOrder'; readonly data: { readonly id: number; readonly petId: number; readonly shipDate: string | null } };
export type ApproveOrder = { readonly type: 'ApproveOrder'; readonly data: { readonly id: number } };
export type DeliverOrder = { readonly type: 'DeliverOrder'; readonly data: { readonly id: number } };
export type CancelOrder = { readonly type: 'CancelOrder'; readonly data: { readonly id: number } };
export type OrderCommand = PlaceOrder | ApproveOrder | DeliverOrder | CancelOrder;

/** What one order command decides: the order's events and its pet's, appended in one commit. */
export interface OrderDecision {
  readonly order: OrderEvent[];
  readonly pet: PetEvent[];
}

/**
 * The Order's decider, which decides for its pet too: a decision across two streams. Placing needs the
 * pet available and reserves it (pending, held by the order); delivering sells it; cancelling frees it.
 * An order that is absent (for a move) is the caller's to refuse before: this throws on it.
 */
export function decideOrder(command: OrderCommand, state: OrderState, pet: PetState): OrderDecision {
  if (command.type === 'PlaceOrder') {
    if (state.kind === 'present') throw new Error(`order ${state.order.id} already exists`);
    const { id, petId, shipDate } = command.data;
    if (pet.kind === 'absent') throw new UnknownPet(petId);
    if (pet.pet.status !== 'available') throw new PetNotAvailable(petId, pet.pet.status);
    return {
      order: [{ type: 'OrderPlaced', data: { id, petId, shipDate } }],
      pet: [{ type: 'PetStatusChanged', data: { id: petId, from: 'available', to: 'pending', orderId: id } }],
    };
  }
  if (state.kind === 'absent') throw new Error(`order ${command.data.id} does not exist`);
  const { order } = state;
  switch (command.type) {
    case 'ApproveOrder':
      if (order.status === 'approved') return { order: [], pet: [] };
      if (order.status !== 'placed') throw new IllegalOrderTransition(order.status, 'approved');
      return { order: [{ type: 'OrderApproved', data: { id: order.id } }], pet: [] };
    case 'DeliverOrder':
      if (order.status === 'delivered') return { order: [], pet: [] };
      if (order.status !== 'approved') throw new IllegalOrderTransition(order.status, 'delivered');
      return { order: [{ type: 'OrderDelivered', data: { id: order.id } }], pet: petMove(pet, order, 'sold') };
    case 'CancelOrder':
      if (order.status === 'cancelled') return { order: [], pet: [] };
      if (order.status === 'delivered') throw new IllegalOrderTransition(order.status, 'cancelled');
      return { order: [{ type: 'OrderCancelled', data: { id: order.id } }], pet: petMove(pet, order, 'available') };
    default:
      return unreachable(command);
  }
}

/** The pet's move its order makes: from the status its reservation left it in, while the order still holds it. */
function petMove(pet: PetState, order: Order, to: PetStatus): PetEvent[] {
  if (pet.kind === 'absent' || pet.heldBy !== order.id) return [];
  return [{ type: 'PetStatusChanged', data: { id: order.petId, from: pet.pet.status ?? null, to, orderId: order.id } }];
}

export function orderStreamId(id: number): string {
  return `order-${id}`;
}

function unreachable(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
