import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeyVerifier } from '../api-keys/key-verifier.ts';
import { JSON_TYPE } from './listing-cache.ts';
import type { ListingCache } from './listing-cache.ts';
import type { RateLimiter } from './rate-limit.ts';
import { millisecondsSince, requestIdFor } from '../observability/request-log.ts';
import type { RequestFields } from '../observability/request-log.ts';
import { bearerKey } from '../api-keys/require-api-key.ts';
import { countHostHeaders } from './require-host.ts';

export interface CachedListingLaneOptions {
  readonly cache: ListingCache;
  readonly verifier: ApiKeyVerifier;
  readonly logRequest: (fields: RequestFields) => void;
  readonly rateLimiter?: RateLimiter | undefined;
  readonly observeRequest?: ((method: string, route: string, status: number, seconds: number) => void) | undefined;
  /** CORS is configured: answers vary by Origin, and requests that carry one take the full chain. */
  readonly crossOrigin: boolean;
}

/** Answers a request on Node's response and returns true, or returns false and leaves it untouched. */
export type RequestLane = (request: IncomingMessage, response: ServerResponse) => boolean;

// The only path the lane answers, and so also the route template it reports.
const LISTING_PATH = '/v1/pets';

/**
 * Cached listings, answered before Koa: a context, the middleware chain and the router cost more than
 * the rest of such an answer together. The lane answers only what the chain would answer the same way
 * (200 to `GET /v1/pets` with one Host, a key already known to be good, a query string whose answer is
 * cached, a token to spare) with the same headers, request id and log line; any other request, and
 * any doubt, takes the full chain, which decides it as always.
 */
export function createCachedListingLane(options: CachedListingLaneOptions): RequestLane {
  const { cache, verifier, logRequest, rateLimiter, observeRequest, crossOrigin } = options;
  return function answerCachedListing(request, response) {
    if (request.method !== 'GET') return false;
    const target = request.url!;
    const queryStart = target.indexOf('?');
    if ((queryStart < 0 ? target : target.slice(0, queryStart)) !== LISTING_PATH) return false;
    const started = performance.now();
    const headers = request.headers;
    if (countHostHeaders(request.rawHeaders) !== 1 || (crossOrigin && headers.origin !== undefined)) return false;
    const authorization = headers.authorization;
    const key = authorization === undefined ? undefined : bearerKey(authorization);
    if (key === undefined) return false;
    const check = verifier.verify(key);
    if (check instanceof Promise || !check.ok) return false;
    const answer = cache.get(queryStart < 0 ? '' : target.slice(queryStart + 1));
    if (answer === undefined) return false;
    // Last: a refusal takes no token, so the chain's own check refuses the request the same way.
    const decision = rateLimiter?.take(check.keyId);
    if (decision !== undefined && !decision.allowed) return false;

    const requestId = requestIdFor(headers['x-request-id']);
    response.setHeader('X-Request-Id', requestId);
    if (crossOrigin) response.setHeader('Vary', 'Origin');
    if (decision !== undefined) for (const name in decision.headers) response.setHeader(name, decision.headers[name]!);
    if (answer.link !== undefined) response.setHeader('Link', answer.link);
    response.setHeader('Content-Type', JSON_TYPE);
    response.setHeader('Content-Length', answer.body.length);
    response.end(answer.body);
    const durationMs = millisecondsSince(started);
    observeRequest?.('GET', LISTING_PATH, 200, durationMs / 1000);
    logRequest({ requestId, method: 'GET', route: LISTING_PATH, path: LISTING_PATH, status: 200, durationMs, apiKeyId: check.keyId });
    return true;
  };
}
