import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { Context } from 'koa';
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { EventLog, OrderPorts, PetStorePorts, PetUseCases } from '../../application/index.ts';
import type { ApiKeyVerifier } from '../api-keys/key-verifier.ts';
import type { RateLimitPolicy } from '../config/config.ts';
import { serviceGuards } from './guards/service-guards.ts';
import { guardRoutes } from './guards/guards.ts';
import type { Guard, GuardedRoute } from './guards/guards.ts';
import { createDocumentRouter } from './routes/document-routes.ts';
import type { ListingCache } from './listing-cache/listing-cache.ts';
import type { InventoryCache } from './listing-cache/inventory-cache.ts';
import { createProblemOf, HttpProblem, renderErrors } from './pipeline/errors.ts';
import type { OpenApiDocument } from '../../contract/openapi-document.ts';
import { createPetRoutes } from './routes/pet-routes.ts';
import type { RouteMarks } from './guards/deprecation.ts';
import { createEventRouter } from './routes/event-routes.ts';
import type { EventFeed } from './routes/event-routes.ts';
import { createProbeRouter } from './routes/probe-routes.ts';
import { createWebhookRouter } from './routes/webhook-routes.ts';
import { createConsumerGroupRouter } from './routes/consumer-group-routes.ts';
import { createOrderRoutes } from './routes/order-routes.ts';
import type { ConsumerGroupResource } from './routes/consumer-group-routes.ts';
import type { WebhookResource } from './routes/webhook-routes.ts';
import type { ReadinessCheck } from './routes/probe-routes.ts';
import { requestLine } from '../observability/request-log.ts';
import { createCachedListingBranch } from './listing-cache/cached-listing.ts';
import { createRateLimiter, limitKeyFailures } from './guards/rate-limit.ts';
import { answerRecorder, createRequestPipeline } from './pipeline/request-pipeline.ts';
import type { AnswerBranch, ObserveRequest, RecordAnswer } from './pipeline/request-pipeline.ts';
import type { AroundAnswer } from '../observability/traced-http.ts';
import { stateOf } from './pipeline/request-state.ts';
import { createKeyCheck } from './guards/require-api-key.ts';
import { createReadPositions } from './pipeline/read-positions.ts';
import type { ReadPositions } from './pipeline/read-positions.ts';

export interface HttpAppOptions {
  readonly ports: PetStorePorts;
  readonly verifier: ApiKeyVerifier;
  readonly publicBaseUrl: () => string;
  readonly logger: Logger;
  /** Per API key; none when undefined. */
  readonly rateLimit?: RateLimitPolicy | undefined;
  /** Requests without a valid key, per client address; none when undefined. */
  readonly keyFailureLimit?: RateLimitPolicy | undefined;
  readonly document: () => OpenApiDocument;
  readonly readiness: ReadinessCheck;
  /** Served at /metrics when given; request durations are recorded through `observeRequest`. */
  readonly metrics?: { readonly registry: Pick<Registry, 'contentType'>; exposition(): Promise<string>; readonly observeRequest: ObserveRequest };
  /** Origins allowed by CORS (['*']: any); empty: no CORS headers at all. */
  readonly corsOrigins: readonly string[];
  readonly listingCache?: ListingCache | undefined;
  /** The inventory kept exact in memory (the one `orders` reads), answered beside the cached listings. */
  readonly inventoryCache?: InventoryCache | undefined;
  /** Around every answer when given: the request's server span (tracing). */
  readonly traceAnswers?: AroundAnswer | undefined;
  /** What the pet routes call; the application's use cases unless given. */
  readonly useCases?: PetUseCases | undefined;
  /** The event feed's routes (experimental), when given. */
  readonly feed?: EventFeed | undefined;
  /** The webhook subscriptions' routes (experimental), when given. */
  readonly webhooks?: WebhookResource | undefined;
  /** The store orders' routes (experimental), when given. */
  readonly orders?: OrderPorts | undefined;
  /** The consumer groups' routes (experimental), when given. */
  readonly consumerGroups?: ConsumerGroupResource | undefined;
  /** What reads are known to include; unless given, checked against `ports.eventStore` (the cache's own look at the file keeps it exact). */
  readonly readPositions?: ReadPositions | undefined;
  /** Guards run after the service's own, by every way of answering (a deployment's, or a test's). */
  readonly extraGuards?: readonly Guard[] | undefined;
}

export interface HttpApp {
  /** The one way in for every request Node has parsed (`pipeline/request-pipeline.ts`). */
  readonly dispatch: (request: IncomingMessage, response: ServerResponse) => void;
  /** The methods a path answers to (empty for an unknown path). */
  methodsAllowedAt(path: string): string[];
  /** The route template a path belongs to (undefined for an unknown path). */
  routeAt(path: string): string | undefined;
  /** The headers a deprecated operation adds to every answer, for the answers Node's parser refused. */
  deprecationAt(method: string, path: string): Readonly<Record<string, string>> | undefined;
  /** Writes an answer's log line and metrics: for what Node's parser refused too. */
  readonly record: RecordAnswer;
}

/**
 * The request pipeline and its Koa application: error rendering, the Host check, CORS, then the routes:
 * the pet operations, the documents, the probes. With a listing cache, cached listings are a branch of
 * the pipeline tried before the app, with the app's own checks (`listing-cache/cached-listing.ts`).
 */
/** Without a log to read, no position can be shown reached: such an app answers a position it has not seen 503. */
const NO_LOG: Pick<EventLog, 'readLog'> = { readLog: async () => [] };

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Koa();
  // Errors are rendered by our middleware; Koa's default handler would only log them to stderr again.
  app.silent = true;
  const rateLimiter = options.rateLimit ? createRateLimiter(options.rateLimit) : undefined;
  const keyCheck = createKeyCheck(options.verifier, options.keyFailureLimit && limitKeyFailures(options.keyFailureLimit));
  const readPositions = options.readPositions ?? createReadPositions({ log: options.feed?.eventLog ?? NO_LOG, refresh: () => {} });
  const problemOf = createProblemOf(options.logger);
  /** The routers in the order they are tried, each with whether its routes need a key and the headers its routes carry on every answer. */
  const routers: { readonly router: Router; readonly keyed: boolean; readonly marks?: RouteMarks }[] = [];
  const methodsAllowedAt = (path: string) => [...new Set(routers.flatMap(({ router }) => router.match(path, 'GET').path).flatMap((layer) => layer.methods))];
  const guards = serviceGuards({ keyCheck, rateLimiter, corsOrigins: options.corsOrigins, methodsAllowedAt, extraGuards: options.extraGuards });
  const pets = createPetRoutes({ ...options, readPositions, guards, problemOf });
  const orders = options.orders && createOrderRoutes({ ...options, orders: options.orders, readPositions, guards, problemOf });
  routers.push(
    { router: pets.router, keyed: true, marks: pets.marks },
    ...(options.feed ? [{ router: createEventRouter({ ...options, feed: options.feed }), keyed: true }] : []),
    ...(options.webhooks ? [{ router: createWebhookRouter({ ...options, webhooks: options.webhooks }), keyed: true }] : []),
    ...(orders ? [{ router: orders.router, keyed: true }] : []),
    ...(options.consumerGroups ? [{ router: createConsumerGroupRouter({ ...options, consumerGroups: options.consumerGroups }), keyed: true }] : []),
    { router: createDocumentRouter(options), keyed: false },
    {
      router: createProbeRouter({
        readiness: options.readiness,
        metrics: options.metrics && { contentType: options.metrics.registry.contentType, exposition: options.metrics.exposition },
      }),
      keyed: false,
    },
  );
  /** The route a method and path are for, as @koa/router picks it: the last matched layer that has methods. */
  const routeOf = (method: string, path: string): GuardedRoute | undefined => {
    for (const { router, keyed, marks } of routers) {
      const layer = router.match(path, method).pathAndMethod.findLast((each) => each.methods.length > 0);
      if (layer !== undefined) return { template: String(layer.path), keyed, marks: layer.name === undefined ? undefined : marks?.[layer.name]?.() };
    }
    return undefined;
  };
  const routeAt = (path: string) => routers.flatMap(({ router }) => router.match(path, 'GET').path).find((layer) => typeof layer.path === 'string')?.path as string | undefined;
  const deprecationAt = (method: string, path: string) => routeOf(method, path)?.marks;
  const record = answerRecorder(requestLine(options.logger), options.metrics?.observeRequest);
  app.use(renderErrors(problemOf, (ctx) => stateOf(ctx).requestId));
  app.use(guardRoutes(guards, routeOf));
  for (const { router } of routers) app.use(router.routes());
  app.use(async (ctx) => {
    // A 405's log line names the route of its path and, when the request carries a live key, the key's id.
    const state = stateOf(ctx);
    state.route = routeAt(ctx.path);
    if (state.route !== undefined && ctx.req.headers.authorization !== undefined) {
      // Only for the log: a key table that cannot be read leaves the 405 a 405.
      const access = await Promise.resolve(keyCheck(state, ctx.req)).catch(() => undefined);
      if (access !== undefined && !(access instanceof HttpProblem)) state.keyId = access.keyId;
    }
    rejectUnrouted(ctx, methodsAllowedAt);
  });
  const cachedListing = options.listingCache && createCachedListingBranch({ cache: options.listingCache, inventory: options.inventoryCache, guards, readPositions });
  // The branches answer different methods: a creation (of a pet, or an order placed), or a cached read.
  const branch: AnswerBranch = (request, response, state) => (request.method === 'POST'
    ? pets.creationBranch(request, response, state) ?? orders?.placementBranch(request, response, state)
    : cachedListing?.(request, response, state));
  const dispatch = createRequestPipeline({ app, record, branch, around: options.traceAnswers });
  return { dispatch, methodsAllowedAt, routeAt, deprecationAt, record };
}

function rejectUnrouted(ctx: Context, methodsAllowedAt: (path: string) => string[]): never {
  const allowed = methodsAllowedAt(ctx.path);
  if (allowed.length > 0) {
    const allow = allowed.join(', ');
    throw new HttpProblem('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { Allow: allow });
  }
  throw new HttpProblem('not_found', `no resource at ${ctx.path}`);
}
