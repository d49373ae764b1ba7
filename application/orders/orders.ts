import { decideOrder } from '../../domain/index.ts';
import type { Order, OrderCommand, OrderStatus, PetStatus } from '../../domain/index.ts';
import { canonicalJson } from '../canonical-json.ts';
import { COMMAND_ATTEMPTS, handleCommand, handleCreation, readState } from '../command-handler.ts';
import { IdempotencyKeyTaken, InvalidPetQuery, StreamVersionConflict, TooMuchContention, VersionMismatch } from '../errors.ts';
import { checkedPage } from '../pets/list-pets.ts';
import type { PageInput } from '../pets/list-pets.ts';
import { ORDER_AGGREGATE, orderStream } from './order-aggregate.ts';
import { petStream } from '../pets/pet-aggregate.ts';
import { recordExpiry, rememberedCreation } from '../remembered-creations.ts';
import type { Clock, EventStore, IdempotencyKeys, RequestContext } from '../ports.ts';

/** No order has this id. */
export class OrderNotFound extends Error {
  constructor(readonly orderId: number | string) {
    super(`order ${orderId} was not found`);
    this.name = 'OrderNotFound';
  }
}

/** An order and the version of its stream it reflects (what an ETag names). */
export interface VersionedOrder {
  readonly order: Order;
  readonly version: number;
}

export interface OrderQuery {
  readonly status?: OrderStatus;
  readonly petId?: number;
  readonly limit: number;
  /** Only orders with a greater id. */
  readonly after?: number;
}

/** The read model of store orders. */
export interface OrderBook {
  list(query: OrderQuery): Promise<Order[]>;
  get(id: number): Promise<VersionedOrder | undefined>;
}

/** The pets counted by status: exact, from the read model. */
export type InventoryCounts = Readonly<Record<PetStatus, number>>;

export interface Inventory {
  count(): Promise<InventoryCounts>;
}

/** What the order use cases need: the event store, the pets' catalogue, the order book and the inventory, keys and time. */
export interface OrderPorts {
  readonly eventStore: EventStore;
  readonly orders: OrderBook;
  readonly inventory: Inventory;
  readonly idempotencyKeys: IdempotencyKeys;
  readonly clock: Clock;
  readonly idempotencyKeyTtlMs?: number;
}

export interface NewOrder {
  readonly petId: number;
  /** Kept exactly as sent. */
  readonly shipDate?: string;
}

/** An order as a write left it, and the log position a read must reach to see it. */
export interface WrittenOrder extends VersionedOrder {
  readonly position: number;
}

/**
 * Places an order for an available pet, which becomes pending, held by the order, in the same commit.
 * Throws `UnknownPet`, `PetNotAvailable`, `IdempotencyKeyReused`; with a key, the same request again
 * answers as the first and places nothing.
 */
export async function placeOrder(
  ports: OrderPorts, newOrder: NewOrder, context: RequestContext = {}, options: { readonly idempotencyKey?: string } = {},
): Promise<WrittenOrder> {
  const { idempotencyKey } = options;
  const scope = context.apiKeyId ?? '';
  const fingerprint = idempotencyKey === undefined ? '' : canonicalJson({ order: newOrder });
  if (idempotencyKey !== undefined) {
    const replay = await replayIfRemembered(ports, scope, idempotencyKey, fingerprint);
    if (replay) return replay;
  }
  const expiresAt = idempotencyKey === undefined ? '' : recordExpiry(ports);
  const place = (id: number): OrderCommand => ({ type: 'PlaceOrder', data: { id, petId: newOrder.petId, shipDate: newOrder.shipDate ?? null } });
  // A petId that can name no pet is refused before the store draws an id.
  if (!Number.isSafeInteger(newOrder.petId) || newOrder.petId < 1) decideOrder(place(0), ORDER_AGGREGATE.initialState(), { kind: 'absent' });
  const pet = petStream(newOrder.petId);
  for (let attempt = 1; ; attempt++) {
    try {
      // Decided under the store's write lock on the pet as it is there (its row, at its stream's version):
      // nothing moves it before the commit. An available pet is held by no order (a hold makes it pending),
      // so the row says all the decision needs.
      const created = await handleCreation(ports, ORDER_AGGREGATE, (id, state, [read]) => decideOrder(place(id), state, read.state).order, {
        context,
        reads: [pet],
        alongside: (id, [read]) => [decideOrder(place(id), ORDER_AGGREGATE.initialState(), read.state).pet],
        ...(idempotencyKey === undefined ? {} : {
          remember: (after) => ({ scope, key: idempotencyKey, fingerprint, answer: presentOrder(after), expiresAt }),
        }),
      });
      return { order: presentOrder(created.state), version: created.version, position: created.position };
    } catch (error) {
      // A concurrent request with the same key committed first: answer as it did.
      if (error instanceof IdempotencyKeyTaken && idempotencyKey !== undefined) {
        const replay = await replayIfRemembered(ports, scope, idempotencyKey, fingerprint);
        if (replay) return replay;
      }
      // An append of the same batch moved the pet after the batch read it: decide again on what it is now.
      if (!(error instanceof StreamVersionConflict)) throw error;
      if (attempt >= COMMAND_ATTEMPTS) throw new TooMuchContention(error.streamId, attempt);
    }
  }
}

async function replayIfRemembered(ports: OrderPorts, scope: string, key: string, fingerprint: string): Promise<WrittenOrder | undefined> {
  const remembered = await rememberedCreation<Order>(ports, scope, key, fingerprint, (order) => orderStream(order.id).streamId);
  return remembered && { order: remembered.answer, version: 1, position: remembered.position };
}

function presentOrder(state: { readonly kind: string; readonly order?: Order }): Order {
  if (state.kind !== 'present' || !state.order) throw new Error('the decision left no order');
  return state.order;
}

export type OrderMove = 'approved' | 'delivered' | 'cancelled';

const COMMANDS: Readonly<Record<OrderMove, OrderCommand['type']>> = { approved: 'ApproveOrder', delivered: 'DeliverOrder', cancelled: 'CancelOrder' };

/**
 * Moves an order (approve, deliver, cancel), and its pet in the same commit: delivering sells it,
 * cancelling makes it available again. Moving to where it is records nothing. Throws `OrderNotFound`,
 * `IllegalOrderTransition`, `VersionMismatch` (when `ifVersion` names versions it is not at).
 */
export async function moveOrder(
  ports: Pick<OrderPorts, 'eventStore' | 'clock'>,
  input: { readonly id: number; readonly to: OrderMove; readonly ifVersion?: readonly number[] | '*' },
  context: RequestContext = {},
): Promise<WrittenOrder> {
  const { id, to, ifVersion } = input;
  const named = ifVersion !== undefined && ifVersion !== '*' ? ifVersion : undefined;
  const found = Number.isSafeInteger(id) && id > 0 ? await readState(ports, orderStream(id)) : undefined;
  if (found?.state.kind !== 'present') throw new OrderNotFound(id);
  const { petId } = found.state.order;
  const order = orderStream(id);
  const outcome = await handleCommand(ports, [order, petStream(petId)], ([read, pet]) => {
    if (read.state.kind === 'absent') throw new OrderNotFound(id);
    if (named && !named.includes(read.version)) throw new VersionMismatch(named, read.version);
    const decided = decideOrder({ type: COMMANDS[to], data: { id } } as OrderCommand, read.state, pet.state);
    return [decided.order, decided.pet];
  }, {
    context,
    onConflict: (conflict) => {
      if (ifVersion !== undefined && conflict.streamId === order.streamId) throw new VersionMismatch(ifVersion, conflict.actual);
    },
  });
  const [after] = outcome.states;
  return { order: presentOrder(after.state), version: after.version, position: outcome.position };
}

/** One order with its version; `OrderNotFound` when there is none. */
export async function getOrder(ports: Pick<OrderPorts, 'orders'>, id: number): Promise<VersionedOrder> {
  const found = Number.isSafeInteger(id) && id > 0 ? await ports.orders.get(id) : undefined;
  if (!found) throw new OrderNotFound(id);
  return found;
}

export interface ListOrdersInput extends PageInput {
  readonly status?: string;
  readonly petId?: number;
}

export interface OrderPage {
  readonly orders: Order[];
  /** The `after` that continues the listing, or undefined when this page is the last. */
  readonly nextAfter: number | undefined;
  readonly limit: number;
}

/** The store's orders in ascending id order, a page at a time, optionally of one status or one pet. */
export async function listOrderPage(ports: Pick<OrderPorts, 'orders'>, input: ListOrdersInput = {}): Promise<OrderPage> {
  const page = checkedPage(input, 'order');
  const { status, petId } = input;
  if (status !== undefined && !(['placed', 'approved', 'delivered', 'cancelled'] as const).includes(status as OrderStatus)) {
    throw new InvalidPetQuery('status', `status must be one of placed, approved, delivered, cancelled, got ${JSON.stringify(status)}`);
  }
  if (petId !== undefined && (!Number.isSafeInteger(petId) || petId < 1)) {
    throw new InvalidPetQuery('petId', `petId must be a pet id: an integer from 1 to 2^53-1, got ${JSON.stringify(petId)}`);
  }
  const query: OrderQuery = { ...page, ...(status === undefined ? {} : { status: status as OrderStatus }), ...(petId === undefined ? {} : { petId }) };
  const orders = await ports.orders.list({ ...query, limit: query.limit + 1 });
  if (orders.length <= query.limit) return { orders, nextAfter: undefined, limit: query.limit };
  orders.length = query.limit;
  return { orders, nextAfter: orders.at(-1)!.id, limit: query.limit };
}

/** The pets by status, exact. */
export function getInventory(ports: Pick<OrderPorts, 'inventory'>): Promise<InventoryCounts> {
  return ports.inventory.count();
}

/** The use cases the order routes call, in one record. */
export const ORDER_USE_CASES = Object.freeze({ placeOrder, moveOrder, getOrder, listOrderPage, getInventory });
