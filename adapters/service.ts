import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pino from 'pino';
import type { Logger } from 'pino';
import { createApiKeyVerifier } from './api-keys.ts';
import { bufferedStdout } from './log-destination.ts';
import type { Config } from './config.ts';
import { ConfigError } from './config.ts';
import { createHttpApp } from './http/app.ts';
import { createListingCache } from './http/listing-cache.ts';
import { startHttpServer } from './http/server.ts';
import { createSqliteApiKeys } from './sqlite/sqlite-api-keys.ts';
import type { ManagedApiKeys } from './sqlite/sqlite-api-keys.ts';
import { openSqlitePetStore } from './sqlite/sqlite-pet-store.ts';
import type { SqlitePetStore } from './sqlite/sqlite-pet-store.ts';

export interface RunningService {
  readonly port: number;
  /** The public base address including /v1. */
  readonly baseUrl: string;
  readonly store: SqlitePetStore;
  readonly apiKeys: ManagedApiKeys;
  /** A development key created at this start, if one was. */
  readonly createdDevelopmentKey: { key: string; file: string } | undefined;
  /** Stops accepting, finishes requests in flight, closes the database. */
  close(): Promise<void>;
}


/** The composition root: builds every adapter from the configuration and starts listening. */
export async function startService(config: Config, options: { logger?: Logger } = {}): Promise<RunningService> {
  const logger = options.logger ?? pino({ level: config.logLevel }, bufferedStdout());
  const store = await openSqlitePetStore(config.database);
  try {
    const apiKeys = createSqliteApiKeys(store.db);
    const createdDevelopmentKey = await ensureSomeKey(config, apiKeys);
    const verifier = createApiKeyVerifier({ environmentKeys: config.apiKeys, table: apiKeys });
    let baseUrl = config.publicBaseUrl ?? '';
    const listingCache = createListingCache(store.changes);
    const { app, methodsAllowedAt } = createHttpApp({ ports: store, verifier, publicBaseUrl: () => baseUrl, logger, listingCache });
    const http = await startHttpServer(app, { host: config.host, port: config.port, methodsAllowedAt });
    if (!config.publicBaseUrl) baseUrl = `http://${hostForUrl(config.host)}:${http.port}/v1`;
    return {
      port: http.port,
      baseUrl,
      store,
      apiKeys,
      createdDevelopmentKey,
      async close() {
        await http.close();
        await store.close();
        logger.flush();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * Development starts with a key ready to use; staging and production refuse to run open to nobody.
 * The new key is written beside the database (mode 0600) so a lost terminal loses nothing.
 */
async function ensureSomeKey(config: Config, apiKeys: ManagedApiKeys): Promise<{ key: string; file: string } | undefined> {
  if (config.apiKeys.length > 0 || (await apiKeys.count()) > 0) return undefined;
  if (config.deployment !== 'development') {
    throw new ConfigError(`PETSTORE_API_KEYS is required in ${config.deployment} when the key table is empty`);
  }
  const { key } = await apiKeys.create('development key', new Date());
  const file = join(dirname(config.database), 'dev-api-key');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, file };
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
