import type { IncomingMessage } from 'node:http';
import { ORDER_USE_CASES, OrderNotFound } from '../../../application/index.ts';
import type { OrderPorts, RequestContext, WrittenOrder } from '../../../application/index.ts';
import { NewOrderSchema, OrderPatchSchema } from '../../../contract/orders.ts';
import { etagFor, parseIdempotencyKey, parseIfMatch } from '../parsing/conditional-headers.ts';
import { bodyShape, readBody } from '../parsing/checked-body.ts';
import { jsonBodyOf, readJsonBody, requireJsonBody } from '../parsing/json-body.ts';
import { nextPageLink, parsePageQuery } from '../parsing/list-query.ts';
import { parsePetId } from '../parsing/pet-id.ts';
import { JSON_TYPE } from '../pipeline/media-types.ts';
import { MIN_POSITION_FIELD, parseMinPosition, POSITION_HEADER } from '../pipeline/read-positions.ts';
import type { ReadPositions } from '../pipeline/read-positions.ts';
import { keyIdOf, stateOf } from '../pipeline/request-state.ts';
import { declareRoutes } from '../pipeline/route-table.ts';
import { createCachedInventoryBranch } from '../listing-cache/cached-listing.ts';
import type { InventoryCache } from '../listing-cache/inventory-cache.ts';
import type { Guard } from '../guards/guards.ts';
import type { RequestState, Route, RouteContext } from '../pipeline/request-state.ts';
import type { ProblemOf } from '../pipeline/errors.ts';
import { createCreationBranch, creationHandler } from './creation-branch.ts';
import type { CreatedAnswer } from './creation-branch.ts';

export interface OrderRoutesOptions {
  readonly orders: OrderPorts;
  /** The deployment's public base address including /v1, for absolute Location and Link headers. */
  readonly publicBaseUrl: () => string;
  /** Where reads that ask for "at least this new" are held to it, and writes say their position. */
  readonly readPositions: ReadPositions;
  /** When given, the inventory is answered from it before the app while it holds the counts (`listing-cache/cached-listing.ts`). */
  readonly inventoryCache?: InventoryCache | undefined;
  /** The checks before any route (`guards/guards.ts`), the app's own list, for the branches. */
  readonly guards: readonly Guard[];
  /** How the app answers a failure, for the placement's branch. */
  readonly problemOf: ProblemOf;
}

const NEW_ORDER = bodyShape(NewOrderSchema, 'a NewOrder');
const ORDER_PATCH = bodyShape(OrderPatchSchema, 'an order status change');

/**
 * Experimental: the store's orders under /v1/store, key-guarded like the pets. Each route maps HTTP to a
 * use case (`application/orders/orders.ts`): the key first, then path, headers, query and body, in that order.
 */
export function createOrderRoutes({ orders: ports, publicBaseUrl, readPositions, inventoryCache, guards, problemOf }: OrderRoutesOptions): readonly Route[] {
  const { placeOrder, moveOrder, getOrder, listOrderPage, getInventory } = ORDER_USE_CASES;
  const router = declareRoutes({ keyed: true });

  /** POST /v1/store/orders once the key is checked (a `Creation`): its route's handler and branch both answer with it (`creation-branch.ts`). */
  async function place(request: IncomingMessage, state: RequestState, apiKeyId: string): Promise<CreatedAnswer> {
    const idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key'] as string | undefined);
    const { petId, shipDate } = readBody(await readJsonBody(request, NEW_ORDER_TYPES), NEW_ORDER);
    const placed = await placeOrder(ports, { petId, ...(shipDate === undefined ? {} : { shipDate }) }, requestContextOf(state, apiKeyId), idempotencyKey === undefined ? {} : { idempotencyKey });
    readPositions.observe(placed.position);
    return {
      headers: {
        Location: `${publicBaseUrl()}/store/orders/${placed.order.id}`, [POSITION_HEADER]: String(placed.position), ETag: etagFor(placed.version), 'Content-Type': JSON_TYPE,
      },
      body: JSON.stringify(placed.order),
    };
  }

  router.post('placeOrder', PLACE_PATH, { branch: createCreationBranch(PLACE_PATH, guards, problemOf, place) }, creationHandler(place));

  router.get('listOrders', '/v1/store/orders', async (ctx) => {
    const query = parsePageQuery(ctx.querystring, { texts: ['status'], integers: ['petId'] });
    await reachAsked(ctx);
    const page = await listOrderPage(ports, query);
    if (page.nextAfter !== undefined) {
      ctx.set('Link', nextPageLink(publicBaseUrl(), '/store/orders', { status: query.status, petId: query.petId }, page.limit, page.nextAfter));
    }
    sendJson(ctx, page.orders);
  });

  router.get('getOrder', '/v1/store/orders/:orderId', async (ctx) => {
    const id = orderIdFromPath(ctx);
    await reachAsked(ctx);
    const { order, version } = await getOrder(ports, id);
    ctx.set('ETag', etagFor(version));
    sendJson(ctx, order);
  });

  router.patch('updateOrder', '/v1/store/orders/:orderId', async (ctx, next) => {
    orderIdFromPath(ctx);
    parseIfMatch(ctx.headers['if-match']);
    await next();
  }, requireJsonBody(['application/json', 'application/merge-patch+json']), async (ctx) => {
    const ifVersion = parseIfMatch(ctx.headers['if-match']);
    const { status } = readBody(jsonBodyOf(ctx), ORDER_PATCH);
    const moved = await moveOrder(ports, { id: orderIdFromPath(ctx), to: status, ...(ifVersion === undefined ? {} : { ifVersion }) }, requestContext(ctx));
    sendWritten(ctx, moved);
  });

  router.delete('cancelOrder', '/v1/store/orders/:orderId', async (ctx) => {
    const id = orderIdFromPath(ctx);
    const ifVersion = parseIfMatch(ctx.headers['if-match']);
    const cancelled = await moveOrder(ports, { id, to: 'cancelled', ...(ifVersion === undefined ? {} : { ifVersion }) }, requestContext(ctx));
    readPositions.observe(cancelled.position);
    ctx.set(POSITION_HEADER, String(cancelled.position));
    ctx.status = 204;
  });

  const cachedInventory = inventoryCache && createCachedInventoryBranch({ inventory: inventoryCache, guards, readPositions });
  router.get('getInventory', '/v1/store/inventory', { branch: cachedInventory }, async (ctx) => {
    await reachAsked(ctx);
    sendJson(ctx, await getInventory(ports));
  });

  /** A read that names a position newer than this instance has seen waits for it first (see read-positions.ts). */
  function reachAsked(ctx: RouteContext): Promise<void> | undefined {
    const minPosition = parseMinPosition(ctx.headers[MIN_POSITION_FIELD]);
    return minPosition === undefined ? undefined : readPositions.reach(minPosition);
  }

  /** A written order's answer: its version as the ETag, the position a read must reach, the order. */
  function sendWritten(ctx: RouteContext, written: WrittenOrder): void {
    readPositions.observe(written.position);
    ctx.set(POSITION_HEADER, String(written.position));
    ctx.set('ETag', etagFor(written.version));
    sendJson(ctx, written.order);
  }

  return router.routes;
}

function sendJson(ctx: RouteContext, value: unknown): void {
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = JSON.stringify(value);
}

/** The path's order id; ids that cannot name an order are 404 here, before any lookup. */
function orderIdFromPath(ctx: RouteContext): number {
  const text = ctx.params.orderId!;
  const id = parsePetId(text, 'orderId');
  if (id === undefined) throw new OrderNotFound(text);
  return id;
}

const PLACE_PATH = '/v1/store/orders';
const NEW_ORDER_TYPES = ['application/json'];

function requestContext(ctx: RouteContext): RequestContext {
  return requestContextOf(stateOf(ctx), keyIdOf(ctx));
}

function requestContextOf({ requestId, traceId }: RequestState, apiKeyId: string): RequestContext {
  return traceId === undefined ? { requestId, apiKeyId } : { requestId, apiKeyId, traceId };
}
