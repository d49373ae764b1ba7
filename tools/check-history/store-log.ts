import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { positionOf } from './pet-log.ts';
import { NotAHistory } from './history.ts';

/** What an order's event made of it. */
export type OrderStatus = 'placed' | 'approved' | 'delivered' | 'cancelled';

const ORDER_STATUS_OF: Readonly<Record<string, OrderStatus>> = {
  [CLOUD_EVENT_TYPES.OrderPlaced]: 'placed',
  [CLOUD_EVENT_TYPES.OrderApproved]: 'approved',
  [CLOUD_EVENT_TYPES.OrderDelivered]: 'delivered',
  [CLOUD_EVENT_TYPES.OrderCancelled]: 'cancelled',
};

/** One store order's event in the final log. */
export interface OrderEvent {
  readonly position: number;
  readonly orderId: number;
  /** The order's pet, as its placement named it. */
  readonly petId: number;
  readonly status: OrderStatus;
}

export interface StoreLog {
  /** The order events in position order. */
  readonly events: readonly OrderEvent[];
}

function idOf(subject: unknown, collection: string): number | undefined {
  if (typeof subject !== 'string' || !subject.startsWith(`${collection}/`)) return undefined;
  const id = subject.slice(collection.length + 1);
  return /^[1-9][0-9]*$/.test(id) ? Number(id) : undefined;
}

/**
 * The store orders of the final log: its events whose type is an order's, each read with its order
 * and that order's pet (an order names its pet when placed). An order event the checker cannot read
 * makes the file not a history, as a pet event does.
 */
export function readStoreLog(served: readonly unknown[]): StoreLog {
  const petOf = new Map<number, number>();
  const events: OrderEvent[] = [];
  served.forEach((raw, at) => {
    const event = raw as Record<string, unknown> | null;
    const status = typeof event?.type === 'string' ? ORDER_STATUS_OF[event.type] : undefined;
    if (status === undefined) return;
    const where = `log event ${at}`;
    const position = positionOf(raw);
    const orderId = idOf(event!.subject, 'store/orders');
    const data = event!.data as Record<string, unknown> | undefined;
    if (position === undefined || orderId === undefined || typeof data !== 'object' || data === null) {
      throw new NotAHistory(`${where} is not an order event with a position, a store/orders/{id} subject and data`);
    }
    if (status === 'placed') {
      if (!Number.isSafeInteger(data.petId)) throw new NotAHistory(`${where}: an order placed without a petId`);
      if (petOf.has(orderId)) throw new NotAHistory(`${where}: order ${orderId} placed twice`);
      petOf.set(orderId, data.petId as number);
    }
    const petId = petOf.get(orderId);
    if (petId === undefined) throw new NotAHistory(`${where}: order ${orderId} moves before it was placed`);
    events.push({ position, orderId, petId, status });
  });
  events.sort((a, b) => a.position - b.position);
  return { events };
}
