import { HttpProblem } from '../pipeline/errors.ts';
import { admitted } from '../guards/guards.ts';
import type { Guard, GuardedRoute } from '../guards/guards.ts';
import { JSON_TYPE } from '../pipeline/media-types.ts';
import type { ListingAnswer, ListingCache } from './listing-cache.ts';
import type { InventoryCache } from './inventory-cache.ts';
import { sendAnswer } from '../pipeline/request-pipeline.ts';
import type { AnswerBranch } from '../pipeline/request-pipeline.ts';
import type { Answered } from '../../observability/request-log.ts';
import { MIN_POSITION_FIELD, minPositionOf } from '../pipeline/read-positions.ts';
import type { ReadPositions } from '../pipeline/read-positions.ts';

export interface CachedListingOptions {
  readonly cache: ListingCache;
  /** The store's inventory, answered here too while its counts are held (the app's route answers it otherwise). */
  readonly inventory?: InventoryCache | undefined;
  /** The checks before any route (`guards.ts`), the app's own list. */
  readonly guards: readonly Guard[];
  /** A request asking for a position newer than this instance's reads are known to include is the app's to wait for. */
  readonly readPositions: Pick<ReadPositions, 'reached'>;
}

// The paths answered here, each also the route template it reports.
const LISTING_PATH = '/v1/pets';
const LISTING_ROUTE: GuardedRoute = { template: LISTING_PATH, keyed: true };
const INVENTORY_PATH = '/v1/store/inventory';
const INVENTORY_ROUTE: GuardedRoute = { template: INVENTORY_PATH, keyed: true };
const LISTING_HEADERS = Object.freeze({ 'Content-Type': JSON_TYPE });

/**
 * The pipeline's branch for cached reads (the pet listings, the inventory), tried before the Koa app: a
 * context, the middleware chain and the router cost more than the rest of such an answer. It runs the
 * app's guards (`guards.ts`), decided once on the request's state (which the app then reads); only a 200
 * is answered here, anything else is left to the app.
 */
export function createCachedListingBranch(options: CachedListingOptions): AnswerBranch {
  const { cache, inventory, guards, readPositions } = options;
  return function answerCachedListing(request, response, state) {
    if (request.method !== 'GET') return undefined;
    const target = request.url!;
    const queryStart = target.indexOf('?');
    const path = queryStart < 0 ? target : target.slice(0, queryStart);
    const route = path === LISTING_PATH ? LISTING_ROUTE : path === INVENTORY_PATH && inventory !== undefined ? INVENTORY_ROUTE : undefined;
    if (route === undefined) return undefined;
    const minPosition = minPositionOf(request.headers[MIN_POSITION_FIELD]);
    if (minPosition !== undefined && (minPosition instanceof HttpProblem || minPosition > readPositions.reached)) return undefined;
    const passed = admitted(guards, request, response, state, route);
    if (passed instanceof Promise) return passed.then((settled) => (settled ? lookUp() : undefined));
    return passed ? lookUp() : undefined;

    function lookUp(): Answered | undefined | Promise<Answered | undefined> {
      const found = route === LISTING_ROUTE ? cache.get(queryStart < 0 ? '' : target.slice(queryStart + 1)) : inventoryAnswer(inventory!);
      // When the look for other instances' commits fails, the app reads the database and answers for it.
      if (found instanceof Promise) return found.then(answerWith, () => answerWith(undefined));
      return answerWith(found);
    }

    function answerWith(answer: ListingAnswer | undefined): Answered | undefined {
      if (answer === undefined) {
        state.listingNotCached = true;
        return undefined;
      }
      const headers = answer.link === undefined ? LISTING_HEADERS : { 'Content-Type': JSON_TYPE, Link: answer.link };
      return sendAnswer(response, 200, headers, answer.body, { route: route!.template, path: route!.template, keyId: state.keyId });
    }
  };
}

/** The inventory's body as a listing answer (it has no next page). */
function inventoryAnswer(inventory: InventoryCache): ListingAnswer | undefined | Promise<ListingAnswer | undefined> {
  const body = inventory.body();
  if (body instanceof Promise) return body.then((held) => held && { body: held, link: undefined });
  return body && { body, link: undefined };
}
