import { answerError, exchange } from './exchange.ts';
import type { Answer, ExchangeRequest, ExchangeSettings } from './exchange.ts';
import type { Inventory, NewOrder, Order, OrderStatus } from './types.ts';

export interface OrderCallOptions {
  readonly signal?: AbortSignal;
}

export interface PlaceOrderOptions extends OrderCallOptions {
  /** Makes the order retry-safe; a new UUID when not given. Reuse it only to repeat the same order. */
  readonly idempotencyKey?: string;
}

export interface MoveOrderOptions extends OrderCallOptions {
  /** Apply only while the order is still at this version: an `etag` from getOrder or a move, or `*`. */
  readonly ifMatch?: string;
}

export interface ListOrdersQuery {
  readonly status?: OrderStatus;
  readonly petId?: number;
  /** 1 to 100 orders a page; the service's default is 20. */
  readonly limit?: number;
  /** Only orders with a larger id: the last id of the page before. */
  readonly after?: number;
}

/** An order and its entity tag (its version), for `ifMatch`. */
export interface VersionedOrder {
  readonly order: Order;
  readonly etag: string;
}

/** Store orders (experimental in the service): each order holds the pet it orders until delivered or cancelled. */
export interface StoreOrderCalls {
  /** Places an order for an available pet (which becomes pending). Retried under one Idempotency-Key, so it never places two. */
  placeOrder(newOrder: NewOrder, options?: PlaceOrderOptions): Promise<VersionedOrder>;
  /** One page of orders in ascending id order. */
  listOrders(query?: ListOrdersQuery, options?: OrderCallOptions): Promise<Order[]>;
  getOrder(id: number, options?: OrderCallOptions): Promise<VersionedOrder>;
  /** placed → approved. Never retried: a move whose answer was lost would come back as 412 with `ifMatch`. */
  approveOrder(id: number, options?: MoveOrderOptions): Promise<VersionedOrder>;
  /** approved → delivered: the pet is sold. Never retried. */
  deliverOrder(id: number, options?: MoveOrderOptions): Promise<VersionedOrder>;
  /** Cancels a placed or approved order: the pet is available again. Cancelling again succeeds too. */
  cancelOrder(id: number, options?: MoveOrderOptions): Promise<void>;
  /** The pets by status, exact. */
  inventory(options?: OrderCallOptions): Promise<Inventory>;
}

/** What the store calls need of the client they are part of. */
export interface StoreOrderContext {
  readonly settings: ExchangeSettings;
  url(path: string, query?: Record<string, string | number | undefined>): URL;
  /** A call retried on network failures, timeouts and 503. */
  retried(request: ExchangeRequest): Promise<Answer>;
  /** A read's headers: the position it must include. */
  readHeaders(): Record<string, string>;
  /** Keeps the position a write's answer gives. */
  notePosition(answer: Answer): void;
}

export function storeOrderCalls({ settings, url, retried, readHeaders, notePosition }: StoreOrderContext): StoreOrderCalls {
  const orderUrl = (id: number) => url(`/store/orders/${encodeURIComponent(String(id))}`);
  const move = async (id: number, status: 'approved' | 'delivered', { ifMatch, signal }: MoveOrderOptions) => {
    const answer = await exchange(settings, {
      method: 'PATCH', url: orderUrl(id), json: { body: { status }, mediaType: 'application/merge-patch+json' }, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch }, signal,
    });
    notePosition(answer);
    return versionedOrder(answer);
  };
  return {
    async placeOrder(newOrder, { idempotencyKey = crypto.randomUUID(), signal } = {}) {
      const answer = await retried({ method: 'POST', url: url('/store/orders'), json: { body: newOrder, mediaType: 'application/json' }, headers: { 'idempotency-key': idempotencyKey }, signal });
      notePosition(answer);
      return versionedOrder(answer);
    },
    async listOrders(query = {}, { signal } = {}) {
      return (await retried({ method: 'GET', url: url('/store/orders', { ...query }), headers: readHeaders(), signal })).body as Order[];
    },
    async getOrder(id, { signal } = {}) {
      return versionedOrder(await retried({ method: 'GET', url: orderUrl(id), headers: readHeaders(), signal }));
    },
    approveOrder: (id, options = {}) => move(id, 'approved', options),
    deliverOrder: (id, options = {}) => move(id, 'delivered', options),
    async cancelOrder(id, { ifMatch, signal } = {}) {
      // Cancelling twice is 204 too: safe to retry.
      notePosition(await retried({ method: 'DELETE', url: orderUrl(id), headers: ifMatch === undefined ? {} : { 'if-match': ifMatch }, signal }));
    },
    async inventory({ signal } = {}) {
      return (await retried({ method: 'GET', url: url('/store/inventory'), headers: readHeaders(), signal })).body as Inventory;
    },
  };
}

function versionedOrder({ response, body }: Answer): VersionedOrder {
  const etag = response.headers.get('etag');
  if (etag === null) throw answerError(response, 'unexpected_response', 'the answer carries no ETag');
  return { order: body as Order, etag };
}
