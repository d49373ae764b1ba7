import { evolveOrder, initialOrderState, orderStreamId } from '../../domain/index.ts';
import type { Order, OrderEvent, OrderState, OrderStatus } from '../../domain/index.ts';
import type { Aggregate, ReadModelRow } from '../aggregate.ts';
import type { StreamRef } from '../command-handler.ts';

/** The Order's row of the read model `orders`. */
export interface OrderRowValues {
  id: number;
  pet_id: number;
  status: string;
  ship_date: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

/** The Order a row of `orders` holds, keys in the order clients see in JSON. */
export function orderFromRow(row: { readonly id: number; readonly pet_id: number; readonly status: string; readonly ship_date: string | null }): Order {
  const status = row.status as OrderStatus;
  const complete = status === 'delivered';
  return row.ship_date === null
    ? { id: row.id, petId: row.pet_id, status, complete }
    : { id: row.id, petId: row.pet_id, status, shipDate: row.ship_date, complete };
}

/** The Order as the store knows it: `order-<id>` streams, four event types, the `orders` read model. */
export const ORDER_AGGREGATE: Aggregate<OrderState, OrderEvent> = {
  name: 'order',
  streamPrefix: 'order-',
  subject: 'store/orders',
  initialState: initialOrderState,
  evolve: evolveOrder,
  events: {
    OrderPlaced: { schemaVersion: 1, cloudEventType: 'com.petstore.order.placed.v1' },
    OrderApproved: { schemaVersion: 1, cloudEventType: 'com.petstore.order.approved.v1' },
    OrderDelivered: { schemaVersion: 1, cloudEventType: 'com.petstore.order.delivered.v1' },
    OrderCancelled: { schemaVersion: 1, cloudEventType: 'com.petstore.order.cancelled.v1' },
  },
  readModel: {
    table: 'orders',
    rowOf(existing, state, version, at) {
      if (state.kind !== 'present') throw new Error('an order stream whose events leave no order');
      const { order } = state;
      const row = existing as unknown as OrderRowValues | undefined;
      if (!row) {
        return { id: order.id, pet_id: order.petId, status: order.status, ship_date: order.shipDate ?? null, version, created_at: at, updated_at: at } satisfies OrderRowValues;
      }
      row.status = order.status;
      row.version = version;
      row.updated_at = at;
      return row as unknown as ReadModelRow;
    },
    stateOf: (row) => ({ kind: 'present', order: orderFromRow(row as unknown as OrderRowValues) }),
    statusesOf: () => [],
  },
};

/** The stream of order `id`, for a decision that reads or appends to it. */
export function orderStream(id: number): StreamRef<OrderState, OrderEvent> {
  return { aggregate: ORDER_AGGREGATE, streamId: orderStreamId(id) };
}
