import { GROUP_LIMITS, PET_USE_CASES, registerAggregate } from '../application/index.ts';
import type { Aggregate } from '../application/index.ts';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { createApiKeyVerifier } from './api-keys/key-verifier.ts';
import { watchKeyRevocations } from './api-keys/key-revocations.ts';
import { createBackgroundWork } from './background/fair-share.ts';
import { countingEventStore } from './observability/counting-event-store.ts';
import type { Config } from './config/config.ts';
import { ConfigError, localBaseUrl } from './config/config.ts';
import { createHttpApp } from './http/app.ts';
import type { Guard } from './http/guards/guards.ts';
import { buildOpenApiDocument, openApiServers } from '../contract/openapi-document.ts';
import type { OpenApiDocument } from '../contract/openapi-document.ts';
import { createListingCache } from './http/listing-cache/listing-cache.ts';
import { cachedInventory } from './http/listing-cache/inventory-cache.ts';
import { startHttpServer } from './http/server/server.ts';
import { createLogger } from './observability/logger.ts';
import { openPetStore } from './store/open-store.ts';
import { EXPIRY_SWEEP_MS } from './store/tables/idempotency-expiry.ts';
import type { IdempotencyExpiry } from './store/tables/idempotency-expiry.ts';
import { createManagedApiKeys } from './api-keys/key-table.ts';
import type { ManagedApiKeys } from './api-keys/key-table.ts';
import type { PetStore } from './store/sql-pet-store.ts';
import { createEventStreams } from './http/routes/event-stream.ts';
import { createWaitingClaims } from './http/routes/waiting-claims.ts';
import { startWebhookDispatcher } from './webhooks/webhook-dispatcher.ts';
import type { WebhookDispatcher } from './webhooks/webhook-dispatcher.ts';
import { createReadPositions } from './http/pipeline/read-positions.ts';

export interface RunningService {
  readonly port: number;
  /** The public base address including /v1. */
  readonly baseUrl: string;
  /** The store's ports; `store.ready()` tells whether the database answers: what a readiness probe asks. */
  readonly store: PetStore;
  readonly apiKeys: ManagedApiKeys;
  /** A development key created at this start, if one was. */
  readonly createdDevelopmentKey: { key: string; file: string } | undefined;
  /** Where the development key an earlier start created is saved, when this start uses the key table and that file is there. */
  readonly savedDevelopmentKey: string | undefined;
  /**
   * Turns /readyz 503 at once, goes on serving for the shutdown delay, then stops accepting, finishes
   * requests in flight, closes the database.
   */
  close(): Promise<void>;
}


export interface StartOptions {
  readonly logger?: Logger;
  /** This process's number among the workers sharing the port (PETSTORE_WORKERS): on every log line and metric. */
  readonly worker?: number | undefined;
  /** A worker's way to every worker's metrics, asked of the primary (see `createServiceMetrics`). */
  readonly everyWorkersMetrics?: (() => Promise<string>) | undefined;
  /** Checks run before any route after the service's own, by every way of answering (`http/guards/service-guards.ts`). */
  readonly extraGuards?: readonly Guard[] | undefined;
  /** Aggregates beside the product's (`AGGREGATES`), registered before the store opens: their events are stored, rebuilt and fed as any other's. */
  readonly aggregates?: readonly Aggregate<any, any>[] | undefined;
}

/** The composition root: builds every adapter from the configuration and starts listening. */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const { worker } = options;
  for (const aggregate of options.aggregates ?? []) registerAggregate(aggregate);
  const baseLogger = options.logger ?? (await createLogger(config));
  const logger = worker === undefined ? baseLogger : baseLogger.child({ worker });
  // The OpenTelemetry SDK is loaded only when tracing is configured.
  const tracing = config.tracing
    ? await (await import('./observability/tracing.ts')).startTracing(config.tracing, { logger, databaseSystem: config.database.kind === 'sqlite' ? 'sqlite' : 'postgresql' })
    : undefined;
  const store = await openPetStore(config.database, { logger, observeWrite: tracing?.observeWrite, serving: true }).catch(async (error: unknown) => {
    await tracing?.shutdown();
    throw error;
  });
  try {
    const apiKeys = createManagedApiKeys(store.apiKeyTable);
    const createdDevelopmentKey = await ensureSomeKey(config, apiKeys);
    const savedDevelopmentKey = createdDevelopmentKey === undefined ? savedDevelopmentKeyFile(config) : undefined;
    const revocations = watchKeyRevocations(apiKeys, { logger });
    const verifier = createApiKeyVerifier({ environmentKeys: config.apiKeys, table: revocations });
    let baseUrl = config.publicBaseUrl ?? '';
    // prom-client is loaded only when metrics are on (production's default is off).
    const { webhookSubscriptions, consumerGroups } = store;
    const waitingClaims = createWaitingClaims({ perKey: GROUP_LIMITS.waitingClaimsPerKey, perClient: GROUP_LIMITS.waitingClaimsPerClient, inAll: config.maxWaitingClaims });
    const metrics = config.metrics
      ? (await import('./observability/metrics.ts')).createServiceMetrics({
          petCounts: () => store.petCountsByStatus(), webhookCounts: () => webhookSubscriptions.countByStatus(), worker,
          groupTotals: async () => ({ totals: await consumerGroups.totals(store.clock.now()), head: await store.eventLog.end() }), everyWorker: options.everyWorkersMetrics,
        })
      : undefined;
    const counted = metrics ? { ...store, eventStore: countingEventStore(store.eventStore, metrics.countAppended) } : store;
    const ports = { ...(tracing ? tracing.tracePorts(counted) : counted), idempotencyKeyTtlMs: config.idempotencyKeyTtlMs };
    const listingCache = createListingCache(store.commits);
    const inventoryCache = cachedInventory(store.inventory, store.commits);
    let document: OpenApiDocument | undefined;
    let stopping = false;
    let closing: Promise<void> | undefined;
    const eventStreams = createEventStreams(store, config.eventStreams, logger);
    let dispatcher: WebhookDispatcher | undefined;
    let idempotencyExpiry: IdempotencyExpiry | undefined;
    const { dispatch, methodsAllowedAt, routeAt, deprecationAt, record } = createHttpApp({
      ports,
      verifier,
      publicBaseUrl: () => baseUrl,
      logger,
      // Built at the first request, once the base address (and in development the port) is known.
      document: () => (document ??= buildOpenApiDocument(openApiServers(config, baseUrl))),
      // Not ready from the moment shutdown begins, so a load balancer stops sending before the listener closes.
      readiness: () => (stopping ? Promise.resolve({ ready: false, reason: 'shutting down' } as const) : store.readiness()),
      ...(metrics ? { metrics } : {}),
      corsOrigins: config.corsOrigins,
      rateLimit: config.rateLimit,
      keyFailureLimit: config.keyFailureLimit,
      listingCache,
      inventoryCache,
      orders: {
        eventStore: ports.eventStore, idempotencyKeys: ports.idempotencyKeys, clock: ports.clock, idempotencyKeyTtlMs: config.idempotencyKeyTtlMs,
        orders: store.orders, inventory: inventoryCache,
      },
      feed: { eventLog: store.eventLog, commits: store.commits, streams: eventStreams },
      webhooks: {
        subscriptions: webhookSubscriptions, targets: config.webhooks, maxPerKey: config.webhooks.maxPerKey, clock: store.clock, changed: () => dispatcher?.poke(),
        replayed: (id) => dispatcher?.replayed(id), rotated: (id) => dispatcher?.rotated(id), secretOverlapMs: config.webhooks.secretOverlapMs,
      },
      consumerGroups: {
        consumerGroups, eventLog: store.eventLog, commits: store.commits, clock: store.clock, maxPerKey: GROUP_LIMITS.groupsPerKey, waitingClaims,
      },
      // On PostgreSQL the cache's look is a query: each cached answer waits for one of its own anyway, and a failed one is that answer's to report.
      readPositions: createReadPositions({ log: store.eventLog, logEnd: () => store.eventLog.end(), refresh: () => void Promise.resolve(store.commits.refresh()).catch(() => {}) }),
      ...(tracing ? { traceAnswers: tracing.traceAnswers, useCases: tracing.traceUseCases(PET_USE_CASES) } : {}),
      extraGuards: options.extraGuards,
    });
    // Background work keeps to its share of the process while requests come (adapters/background/fair-share.ts).
    const background = createBackgroundWork();
    const taken = (request: Parameters<typeof dispatch>[0], response: Parameters<typeof dispatch>[1]) => {
      background.requestTaken();
      dispatch(request, response);
    };
    const http = await startHttpServer(taken, { host: config.host, port: config.port, limits: config.limits, methodsAllowedAt, routeAt, deprecationAt, record });
    if (!config.publicBaseUrl) baseUrl = localBaseUrl(config.host, http.port);
    // Sweeps at least as often as keys expire, and at most every second.
    idempotencyExpiry = store.startIdempotencyExpiry({
      clock: store.clock, logger, everyMs: Math.min(EXPIRY_SWEEP_MS, Math.max(1000, config.idempotencyKeyTtlMs)), background,
    });
    // Started once the base address is known: it is each delivered event's `source`.
    dispatcher = startWebhookDispatcher({
      subscriptions: webhookSubscriptions, eventLog: store.eventLog, commits: store.commits, clock: store.clock, logger, source: () => baseUrl, delivery: config.webhooks,
      background,
    });
    // What a revoked key holds open ends with it.
    revocations.onRevoked((keyId) => {
      eventStreams.keyRevoked(keyId);
      waitingClaims.keyRevoked(keyId);
      dispatcher?.keyRevoked(keyId);
    });
    return {
      port: http.port,
      baseUrl,
      store,
      apiKeys,
      createdDevelopmentKey,
      savedDevelopmentKey,
      close() {
        closing ??= (async () => {
          stopping = true;
          revocations.close();
          if (config.shutdownDelayMs > 0) await new Promise((resolveDelay) => setTimeout(resolveDelay, config.shutdownDelayMs));
          // Open event streams would hold the server's close until its grace ran out: end them once it stops accepting.
          const closed = http.close();
          eventStreams.close();
          waitingClaims.close();
          await Promise.all([closed, dispatcher?.close(), idempotencyExpiry?.close()]);
          await store.close();
          await tracing?.shutdown();
          logger.flush();
        })();
        return closing;
      },
    };
  } catch (error) {
    await store.close();
    await tracing?.shutdown();
    throw error;
  }
}

/**
 * Development starts with a key ready to use; staging and production refuse to run open to nobody.
 * The new key is written beside the SQLite file, or to ./data on PostgreSQL (mode 0600), so a lost
 * terminal loses nothing.
 */
async function ensureSomeKey(config: Config, apiKeys: ManagedApiKeys): Promise<{ key: string; file: string } | undefined> {
  if (config.apiKeys.length > 0 || (await apiKeys.count()) > 0) return undefined;
  if (config.deployment !== 'development') {
    throw new ConfigError(`PETSTORE_API_KEYS is required in ${config.deployment} when the key table is empty`);
  }
  const { key } = await apiKeys.create('development key', new Date());
  const file = developmentKeyFile(config);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, file };
}

function developmentKeyFile(config: Config): string {
  return join(config.database.kind === 'sqlite' ? dirname(config.database.path) : join('.', 'data'), 'dev-api-key');
}

/** In development without keys from the environment: the file an earlier start saved its key to, if it is there. */
function savedDevelopmentKeyFile(config: Config): string | undefined {
  if (config.deployment !== 'development' || config.apiKeys.length > 0) return undefined;
  const file = developmentKeyFile(config);
  return existsSync(file) ? file : undefined;
}
