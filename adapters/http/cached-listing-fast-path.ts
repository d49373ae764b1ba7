import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyCheckOf } from '../api-keys/require-api-key.ts';
import { HttpProblem } from './errors.ts';
import { JSON_TYPE } from './listing-cache.ts';
import type { ListingCache } from './listing-cache.ts';
import { decideRate } from './rate-limit.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { RecordAnswer, RequestState } from './request-pipeline.ts';
import { MIN_POSITION_FIELD, minPositionOf } from './read-positions.ts';
import type { ReadPositions } from './read-positions.ts';

export interface CachedListingFastPathOptions {
  readonly cache: ListingCache;
  readonly keyCheck: KeyCheckOf;
  readonly record: RecordAnswer;
  readonly rateLimiter?: RateLimiter | undefined;
  /** CORS is configured: answers vary by Origin, and requests that carry one take the full chain. */
  readonly crossOrigin: boolean;
  /** A request asking for a position newer than this instance's reads are known to include is the app's to wait for. */
  readonly readPositions: Pick<ReadPositions, 'reached'>;
}

/** Answers a request on Node's response and returns true, or returns false and leaves it, and its state, to the app. */
export type FastPath = (request: IncomingMessage, response: ServerResponse, state: RequestState) => boolean;

// The only path answered here, and so also the route template it reports.
const LISTING_PATH = '/v1/pets';

/**
 * Cached listings, answered before Koa: a context, the middleware chain and the router cost more than
 * the rest of such an answer. The checks are the app's own, decided once on the request's state (which
 * the app then reads); only a 200 is answered here, anything else is left to the app.
 */
export function createCachedListingFastPath(options: CachedListingFastPathOptions): FastPath {
  const { cache, keyCheck, record, rateLimiter, crossOrigin, readPositions } = options;
  return function answerCachedListing(request, response, state) {
    if (request.method !== 'GET') return false;
    const target = request.url!;
    const queryStart = target.indexOf('?');
    if ((queryStart < 0 ? target : target.slice(0, queryStart)) !== LISTING_PATH) return false;
    if (state.hostProblem !== undefined || (crossOrigin && request.headers.origin !== undefined)) return false;
    const minPosition = minPositionOf(request.headers[MIN_POSITION_FIELD]);
    if (minPosition !== undefined && (minPosition instanceof HttpProblem || minPosition > readPositions.reached)) return false;
    const access = keyCheck(state, request);
    if (access instanceof Promise || access instanceof HttpProblem) return false;
    const answer = cache.get(queryStart < 0 ? '' : target.slice(queryStart + 1));
    if (answer === undefined) {
      state.listingMissed = true;
      return false;
    }
    const decision = rateLimiter && decideRate(rateLimiter, state, access.keyId);
    if (decision !== undefined && !decision.allowed) return false;

    if (crossOrigin) response.setHeader('Vary', 'Origin');
    if (decision !== undefined) for (const name in decision.headers) response.setHeader(name, decision.headers[name]!);
    if (answer.link !== undefined) response.setHeader('Link', answer.link);
    response.setHeader('Content-Type', JSON_TYPE);
    response.setHeader('Content-Length', answer.body.length);
    response.end(answer.body);
    record(state, 'GET', LISTING_PATH, LISTING_PATH, 200, access.keyId);
    return true;
  };
}
