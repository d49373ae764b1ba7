import Koa from 'koa';
import type { Context, Middleware } from 'koa';
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { PetStorePorts } from '../../application/index.ts';
import type { ApiKeyVerifier } from '../api-keys/key-verifier.ts';
import type { RateLimitPolicy } from '../config/config.ts';
import { allowCrossOrigin } from './cors.ts';
import { createDocumentRouter } from './document-routes.ts';
import type { ListingCache } from './listing-cache.ts';
import { HttpProblem, renderErrors } from './errors.ts';
import type { OpenApiDocument } from '../../contract/openapi-document.ts';
import { createPetRouter } from './pet-routes.ts';
import { createEventRouter } from './event-routes.ts';
import type { EventFeed } from './event-routes.ts';
import { createProbeRouter } from './probe-routes.ts';
import type { ReadinessCheck } from './probe-routes.ts';
import { measureRequests } from '../observability/request-metrics.ts';
import { logRequests, requestLine } from '../observability/request-log.ts';
import { createCachedListingLane } from './cached-listing-fast-path.ts';
import type { RequestLane } from './cached-listing-fast-path.ts';
import { createRateLimiter } from './rate-limit.ts';
import { requireHost } from './require-host.ts';
import type { PetUseCases } from './pet-use-cases.ts';

export interface HttpAppOptions {
  readonly ports: PetStorePorts;
  readonly verifier: ApiKeyVerifier;
  readonly publicBaseUrl: () => string;
  readonly logger: Logger;
  /** Per API key; none when undefined. */
  readonly rateLimit?: RateLimitPolicy | undefined;
  readonly document: () => OpenApiDocument;
  readonly readiness: ReadinessCheck;
  /** Served at /metrics when given; request durations are recorded through `observeRequest`. */
  readonly metrics?: { readonly registry: Registry; observeRequest(method: string, route: string, status: number, seconds: number): void };
  /** Origins allowed by CORS (['*']: any); empty: no CORS headers at all. */
  readonly corsOrigins: readonly string[];
  readonly listingCache?: ListingCache | undefined;
  /** First in the chain when given: the request's server span (tracing). */
  readonly traceRequests?: Middleware | undefined;
  /** What the pet routes call; the application's use cases unless given. */
  readonly useCases?: PetUseCases | undefined;
  /** The event feed's routes (experimental), when given. */
  readonly feed?: EventFeed | undefined;
}

export interface HttpApp {
  readonly app: Koa;
  /** The methods a path answers to (empty for an unknown path). */
  methodsAllowedAt(path: string): string[];
  /** Answers cached listings before the app; present when there is a listing cache. */
  readonly cachedListings: RequestLane | undefined;
}

/**
 * The Koa application: request log and metrics (outermost, so they see the final status), error
 * rendering, the Host check, CORS, then the routes: the pet operations, the documents, the probes.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Koa();
  // Errors are rendered by our middleware; Koa's default handler would only log them to stderr again.
  app.silent = true;
  const rateLimiter = options.rateLimit ? createRateLimiter(options.rateLimit) : undefined;
  const routers: Router[] = [
    createPetRouter({ ...options, rateLimiter }),
    ...(options.feed ? [createEventRouter({ ...options, feed: options.feed, rateLimiter })] : []),
    createDocumentRouter(options),
    createProbeRouter({ readiness: options.readiness, metrics: options.metrics?.registry }),
  ];
  const methodsAllowedAt = (path: string) => [...new Set(routers.flatMap((router) => router.match(path, 'GET').path.flatMap((layer) => layer.methods)))];
  const logRequest = requestLine(options.logger);
  if (options.traceRequests) app.use(options.traceRequests);
  app.use(logRequests(logRequest));
  if (options.metrics) app.use(measureRequests(options.metrics.observeRequest));
  app.use(renderErrors(options.logger));
  app.use(requireHost);
  // Without configured origins there is nothing to add: no middleware at all on the hot path.
  if (options.corsOrigins.length > 0) app.use(allowCrossOrigin(options.corsOrigins, methodsAllowedAt));
  for (const router of routers) app.use(router.routes());
  app.use(async (ctx) => rejectUnrouted(ctx, methodsAllowedAt));
  const cachedListings = options.listingCache && createCachedListingLane({
    cache: options.listingCache,
    verifier: options.verifier,
    logRequest,
    rateLimiter,
    observeRequest: options.metrics?.observeRequest,
    crossOrigin: options.corsOrigins.length > 0,
  });
  return { app, methodsAllowedAt, cachedListings };
}

/** A known path with another method is 405 with `Allow`, for any method name; anything else is 404. */
function rejectUnrouted(ctx: Context, methodsAllowedAt: (path: string) => string[]): never {
  const allowed = methodsAllowedAt(ctx.path);
  if (allowed.length > 0) {
    const allow = allowed.join(', ');
    throw new HttpProblem('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { Allow: allow });
  }
  throw new HttpProblem('not_found', `no resource at ${ctx.path}`);
}
