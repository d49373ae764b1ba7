import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { EventLog, OrderPorts, PetStorePorts, PetUseCases } from '../../application/index.ts';
import type { ApiKeyVerifier } from '../api-keys/key-verifier.ts';
import type { RateLimitPolicy } from '../config/config.ts';
import { serviceGuards } from './guards/service-guards.ts';
import { guardRoutes } from './guards/guards.ts';
import type { Guard } from './guards/guards.ts';
import { createDocumentRoutes } from './routes/document-routes.ts';
import type { ListingCache } from './listing-cache/listing-cache.ts';
import type { InventoryCache } from './listing-cache/inventory-cache.ts';
import { createProblemOf, HttpProblem, renderErrors } from './pipeline/errors.ts';
import type { OpenApiDocument } from '../../contract/openapi-document.ts';
import { createPetRoutes } from './routes/pet-routes.ts';
import { createEventRoutes } from './routes/event-routes.ts';
import type { EventFeed } from './routes/event-routes.ts';
import { createProbeRoutes } from './routes/probe-routes.ts';
import { createWebhookRoutes } from './routes/webhook-routes.ts';
import { createConsumerGroupRoutes } from './routes/consumer-group-routes.ts';
import { createOrderRoutes } from './routes/order-routes.ts';
import type { ConsumerGroupResource } from './routes/consumer-group-routes.ts';
import type { WebhookResource } from './routes/webhook-routes.ts';
import type { ReadinessCheck } from './routes/probe-routes.ts';
import { requestLine } from '../observability/request-log.ts';
import { createRateLimiter, limitKeyFailures } from './guards/rate-limit.ts';
import { answerRecorder, createRequestPipeline } from './pipeline/request-pipeline.ts';
import type { ObserveRequest, RecordAnswer } from './pipeline/request-pipeline.ts';
import { routeTable, runHandlers } from './pipeline/route-table.ts';
import type { RouteTable } from './pipeline/route-table.ts';
import type { RouteContext } from './pipeline/request-state.ts';
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

/** Without a log to read, no position can be shown reached: such an app answers a position it has not seen 503. */
const NO_LOG: Pick<EventLog, 'readLog'> = { readLog: async () => [] };

/**
 * The request pipeline and its Koa application: one table of routes (each with its key rule, its marks
 * and, for a creation and a cached listing, the branch that answers before the app), matched once a
 * request; then error rendering, the one list of guards, and the matched route's handlers.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Koa();
  // Errors are rendered by our middleware; Koa's default handler would only log them to stderr again.
  app.silent = true;
  const rateLimiter = options.rateLimit ? createRateLimiter(options.rateLimit) : undefined;
  const keyCheck = createKeyCheck(options.verifier, options.keyFailureLimit && limitKeyFailures(options.keyFailureLimit));
  const readPositions = options.readPositions ?? createReadPositions({ log: options.feed?.eventLog ?? NO_LOG, refresh: () => {} });
  const problemOf = createProblemOf(options.logger);
  // The guards' CORS check asks the table, which the pet routes' branches (given the guards) are part of.
  let routes: RouteTable | undefined;
  const methodsAllowedAt = (path: string) => routes!.methodsAt(path);
  const guards = serviceGuards({ keyCheck, rateLimiter, corsOrigins: options.corsOrigins, methodsAllowedAt, extraGuards: options.extraGuards });
  // In the order they are tried: keyed operations, then the documents and the probes.
  routes = routeTable([
    ...createPetRoutes({ ...options, readPositions, guards, problemOf }),
    ...(options.feed ? createEventRoutes({ ...options, feed: options.feed }) : []),
    ...(options.webhooks ? createWebhookRoutes({ ...options, webhooks: options.webhooks }) : []),
    ...(options.orders ? createOrderRoutes({ ...options, orders: options.orders, readPositions, guards, problemOf }) : []),
    ...(options.consumerGroups ? createConsumerGroupRoutes({ ...options, consumerGroups: options.consumerGroups }) : []),
    ...createDocumentRoutes(options),
    ...createProbeRoutes({
      readiness: options.readiness,
      metrics: options.metrics && { contentType: options.metrics.registry.contentType, exposition: options.metrics.exposition },
    }),
  ]);
  const table = routes;
  const routeAt = (path: string) => table.templateAt(path);
  const deprecationAt = (method: string, path: string) => table.match(method, path)?.route.marks?.();
  const record = answerRecorder(requestLine(options.logger), options.metrics?.observeRequest);
  app.use(renderErrors(problemOf, (ctx) => stateOf(ctx).requestId));
  app.use(guardRoutes(guards));
  app.use((ctx, next) => {
    const matched = stateOf(ctx).matched;
    if (matched === undefined) return next();
    (ctx as RouteContext).params = matched.params;
    return runHandlers(matched.route.handlers, ctx as RouteContext, next);
  });
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
  const dispatch = createRequestPipeline({ app, record, routes: table, around: options.traceAnswers });
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
