import { HttpProblem } from '../pipeline/errors.ts';
import { admitted } from '../guards/guards.ts';
import type { Guard } from '../guards/guards.ts';
import { JSON_TYPE } from '../pipeline/media-types.ts';
import type { ListingAnswer, ListingCache } from './listing-cache.ts';
import type { InventoryCache } from './inventory-cache.ts';
import { sendAnswer } from '../pipeline/request-pipeline.ts';
import type { AnswerBranch } from '../pipeline/request-state.ts';
import type { Answered } from '../../observability/request-log.ts';
import { MIN_POSITION_FIELD, minPositionOf } from '../pipeline/read-positions.ts';
import type { ReadPositions } from '../pipeline/read-positions.ts';

export interface CachedReadOptions {
  /** The checks before any route (`guards.ts`), the app's own list. */
  readonly guards: readonly Guard[];
  /** A request asking for a position newer than this instance's reads are known to include is the app's to wait for. */
  readonly readPositions: Pick<ReadPositions, 'reached'>;
}

export interface CachedListingOptions extends CachedReadOptions {
  readonly cache: ListingCache;
}

const LISTING_HEADERS = Object.freeze({ 'Content-Type': JSON_TYPE });

/** `GET /v1/pets`'s branch in the route table: a listing the cache holds for the query string. */
export function createCachedListingBranch({ cache, ...options }: CachedListingOptions): AnswerBranch {
  return cachedReadBranch(options, (query) => cache.get(query));
}

/** `GET /v1/store/inventory`'s branch in the route table: the store's inventory while its counts are held (the app's route answers it otherwise). */
export function createCachedInventoryBranch({ inventory, ...options }: CachedReadOptions & { readonly inventory: InventoryCache }): AnswerBranch {
  return cachedReadBranch(options, () => inventoryAnswer(inventory));
}

/**
 * The pipeline's branch for a cached read (a pet listing, the inventory), tried before the Koa app: a
 * context, the middleware chain and the router cost more than the rest of such an answer. It runs the
 * app's guards (`guards.ts`), decided once on the request's state (which the app then reads); only a 200
 * is answered here, anything else is left to the app.
 */
function cachedReadBranch({ guards, readPositions }: CachedReadOptions, look: (query: string) => ReturnType<ListingCache['get']>): AnswerBranch {
  return function answerCachedRead(request, response, state) {
    const target = request.url!;
    const queryStart = target.indexOf('?');
    const minPosition = minPositionOf(request.headers[MIN_POSITION_FIELD]);
    if (minPosition !== undefined && (minPosition instanceof HttpProblem || minPosition > readPositions.reached)) return undefined;
    const passed = admitted(guards, request, response, state);
    if (passed instanceof Promise) return passed.then((settled) => (settled ? lookUp() : undefined));
    return passed ? lookUp() : undefined;

    function lookUp(): Answered | undefined | Promise<Answered | undefined> {
      const found = look(queryStart < 0 ? '' : target.slice(queryStart + 1));
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
      // The route is a path without parameters: its template is the path answered.
      const template = state.matched!.route.template;
      return sendAnswer(response, state, 200, headers, answer.body, { route: template, path: template, keyId: state.keyId });
    }
  };
}

/** The inventory's body as a listing answer (it has no next page). */
function inventoryAnswer(inventory: InventoryCache): ListingAnswer | undefined | Promise<ListingAnswer | undefined> {
  const body = inventory.body();
  if (body instanceof Promise) return body.then((held) => held && { body: held, link: undefined });
  return body && { body, link: undefined };
}
