import { answerError, exchange } from './exchange.ts';
import type { Answer, ExchangeRequest, ExchangeSettings } from './exchange.ts';
import type { Inventory, NewOrder, Order, OrderStatus } from './types.ts';

export interface OrderCallOptions {
  readonly signal?: AbortSignal;
  /** The caller's W3C trace context, sent with every request of the call (as on every other call). */
  readonly traceparent?: string;
  readonly tracestate?: string;
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
  /** A read's headers: the position it must include, and the call's trace context. */
  readHeaders(options: OrderCallOptions): Record<string, string>;
  /** The call's trace context as headers. */
  traceHeaders(options: OrderCallOptions): Record<string, string>;
  /** Keeps the position a write's answer gives. */
  notePosition(answer: Answer): void;
}

export function storeOrderCalls({ settings, url, retried, readHeaders, traceHeaders, notePosition }: StoreOrderContext): StoreOrderCalls {
  const orderUrl = (id: number) => url(`/store/orders/${encodeURIComponent(String(id))}`);
  const move = async (id: number, status: 'approved' | 'delivered', options: MoveOrderOptions) => {
    const { ifMatch, signal } = options;
    const answer = await exchange(settings, {
      method: 'PATCH', url: orderUrl(id), json: { body: { status }, mediaType: 'application/merge-patch+json' },
      headers: { ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }), ...traceHeaders(options) }, signal,
    });
    notePosition(answer);
    return versionedOrder(answer);
  };
  return {
    async placeOrder(newOrder, options = {}) {
      const { idempotencyKey = crypto.randomUUID(), signal } = options;
      const answer = await retried({
        method: 'POST', url: url('/store/orders'), json: { body: newOrder, mediaType: 'application/json' }, headers: { 'idempotency-key': idempotencyKey, ...traceHeaders(options) }, signal,
      });
      notePosition(answer);
      return versionedOrder(answer);
    },
    async listOrders(query = {}, options = {}) {
      return (await retried({ method: 'GET', url: url('/store/orders', { ...query }), headers: readHeaders(options), signal: options.signal })).body as Order[];
    },
    async getOrder(id, options = {}) {
      return versionedOrder(await retried({ method: 'GET', url: orderUrl(id), headers: readHeaders(options), signal: options.signal }));
    },
    approveOrder: (id, options = {}) => move(id, 'approved', options),
    deliverOrder: (id, options = {}) => move(id, 'delivered', options),
    async cancelOrder(id, options = {}) {
      const { ifMatch, signal } = options;
      // Cancelling twice is 204 too: safe to retry.
      notePosition(await retried({ method: 'DELETE', url: orderUrl(id), headers: { ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }), ...traceHeaders(options) }, signal }));
    },
    async inventory(options = {}) {
      return (await retried({ method: 'GET', url: url('/store/inventory'), headers: readHeaders(options), signal: options.signal })).body as Inventory;
    },
  };
}

function versionedOrder({ response, body }: Answer): VersionedOrder {
  const etag = response.headers.get('etag');
  if (etag === null) throw answerError(response, 'unexpected_response', 'the answer carries no ETag');
  return { order: body as Order, etag };
}
