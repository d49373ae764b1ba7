import type { Logger } from 'pino';
import type { PetStatus } from '../../domain/index.ts';
import type { ConsumerGroups, WebhookDeliveryState, WebhookSubscriptions } from '../../application/index.ts';
import type { DatabaseConfig } from '../config/config.ts';
import { startIdempotencyExpiry } from './tables/idempotency-expiry.ts';
import type { IdempotencyExpiry, IdempotencyExpiryOptions } from './tables/idempotency-expiry.ts';
import { pendingMigrations } from './migrations.ts';
import { rebuildReadModels, verifyReadModels } from './read-models/read-model-maintenance.ts';
import type { Progress, ProjectionDifference } from './read-models/read-model-maintenance.ts';
import { createSqlApiKeyTable } from './tables/sql-api-key-table.ts';
import type { PetStore, SqlPetStore } from './sql-pet-store.ts';
import { createSqlWebhookSubscriptions } from './tables/sql-webhook-subscriptions.ts';
import { createSqlConsumerGroups } from './tables/consumer-groups.ts';
import { checkReadiness, countPetsByStatus, throwUnlessReachable } from './store-health.ts';
import type { Readiness } from './store-health.ts';
import { openSqlitePetStore } from './sqlite/sqlite-pet-store.ts';
import type { WriteObserver } from './write/write-observer.ts';

export interface OpenPetStoreOptions {
  readonly migrate?: boolean;
  readonly logger?: Logger;
  /** Hears of each write where the store commits in groups (SQLite). */
  readonly observeWrite?: WriteObserver | undefined;
  /**
   * For the service: a damaged SQLite file is refused at the start, and the store's reading connection
   * only reads. Maintenance commands leave it out and write on it too.
   */
  readonly serving?: boolean;
}

/**
 * The store as the service and the commands get it: the application's ports, the tables beside the log
 * (keys, webhook subscriptions), the maintenance, each a capability; the database stays inside.
 */
export interface OpenedStore extends PetStore {
  readonly webhookSubscriptions: WebhookSubscriptions & WebhookDeliveryState;
  readonly consumerGroups: ConsumerGroups;
  /** The `api_keys` table (see `ApiKeyRows`). */
  readonly apiKeyTable: ReturnType<typeof createSqlApiKeyTable>;
  /** Ready: the database answers, is migrated, and (where the store can tell) writes can commit. */
  readiness(): Promise<Readiness>;
  /** Resolves once the database answered a trivial query; rejects with why it did not. */
  reachable(): Promise<void>;
  petCountsByStatus(): Promise<Map<PetStatus | null, number>>;
  /** The migrations this code knows that the database has not applied. */
  pendingMigrations(): Promise<string[]>;
  rebuildProjection(onProgress?: Progress): Promise<{ events: number; rows: number }>;
  verifyProjection(onProgress?: Progress): Promise<ProjectionDifference[]>;
  startIdempotencyExpiry(options: IdempotencyExpiryOptions): IdempotencyExpiry;
}

/** The store the configuration names: a SQLite file or a PostgreSQL database (its driver loaded only then). */
export async function openPetStore(database: DatabaseConfig, options: OpenPetStoreOptions = {}): Promise<OpenedStore> {
  return opened(await openSqlPetStore(database, options));
}

/** `openPetStore`'s store with its database, for the store's own modules and for tests that look at rows. */
export async function openSqlPetStore(database: DatabaseConfig, options: OpenPetStoreOptions = {}): Promise<SqlPetStore> {
  const migrate = options.migrate === undefined ? {} : { migrate: options.migrate };
  if (database.kind === 'sqlite') {
    return openSqlitePetStore(database.path, { ...migrate, observeWrite: options.observeWrite, ...(options.serving ? { checkAtOpen: true, readsOnly: true } : {}) });
  }
  const { openPostgresPetStore } = await import('./postgres/postgres-pet-store.ts');
  return openPostgresPetStore(database, { ...migrate, ...(options.logger ? { logger: options.logger } : {}) });
}

const beneath = new WeakMap<PetStore, SqlPetStore>();

/** The store with its database beneath an `OpenedStore`: for tests that reach the service's own connections, never for the service. */
export function sqlStoreBeneath(store: PetStore): SqlPetStore | undefined {
  return beneath.get(store);
}

/** `store`'s capabilities over its database, which none of them hands out. */
export function opened(store: SqlPetStore): OpenedStore {
  const { eventStore, catalog, orders, inventory, idempotencyKeys, clock, eventLog, commits } = store;
  const lent: OpenedStore = {
    eventStore, catalog, orders, inventory, idempotencyKeys, clock, eventLog, commits,
    ready: () => store.ready(),
    ...(store.checkWrites ? { checkWrites: store.checkWrites } : {}),
    close: () => store.close(),
    webhookSubscriptions: createSqlWebhookSubscriptions(store),
    consumerGroups: createSqlConsumerGroups(store),
    apiKeyTable: createSqlApiKeyTable(store),
    readiness: () => checkReadiness(store),
    reachable: () => throwUnlessReachable(store.db),
    petCountsByStatus: () => countPetsByStatus(store.db),
    pendingMigrations: () => pendingMigrations(store.db),
    rebuildProjection: (onProgress) => rebuildReadModels(store, onProgress),
    verifyProjection: (onProgress) => verifyReadModels(store, onProgress),
    startIdempotencyExpiry: (options) => startIdempotencyExpiry(store, options),
  };
  beneath.set(lent, store);
  return lent;
}
