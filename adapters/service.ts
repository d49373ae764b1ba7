import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pino from 'pino';
import type { Logger } from 'pino';
import { createApiKeyVerifier } from './api-keys.ts';
import type { Config } from './config.ts';
import { ConfigError } from './config.ts';
import { createHttpApp } from './http/app.ts';
import { startHttpServer } from './http/server.ts';
import { openPetStore } from './open-pet-store.ts';
import { createSqlApiKeys } from './sql/api-key-table.ts';
import type { ManagedApiKeys } from './sql/api-key-table.ts';
import type { SqlPetStore } from './sql/sql-pet-store.ts';

export interface RunningService {
  readonly port: number;
  /** The public base address including /v1. */
  readonly baseUrl: string;
  /** `store.ready()` tells whether the database answers: what a readiness probe asks. */
  readonly store: SqlPetStore;
  readonly apiKeys: ManagedApiKeys;
  /** A development key created at this start, if one was. */
  readonly createdDevelopmentKey: { key: string; file: string } | undefined;
  /** Stops accepting, finishes requests in flight, closes the database. */
  close(): Promise<void>;
}

/** The composition root: builds every adapter from the configuration and starts listening. */
export async function startService(config: Config, options: { logger?: Logger } = {}): Promise<RunningService> {
  const logger = options.logger ?? pino({ level: config.logLevel });
  const store = await openPetStore(config.database, { logger });
  try {
    const apiKeys = createSqlApiKeys(store.db, store.flavour);
    const createdDevelopmentKey = await ensureSomeKey(config, apiKeys);
    const verifier = createApiKeyVerifier({ environmentKeys: config.apiKeys, table: apiKeys });
    let baseUrl = config.publicBaseUrl ?? '';
    const { app, methodsAllowedAt } = createHttpApp({ ports: store, verifier, publicBaseUrl: () => baseUrl, logger });
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
      },
    };
  } catch (error) {
    await store.close();
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
  const directory = config.database.kind === 'sqlite' ? dirname(config.database.path) : join('.', 'data');
  mkdirSync(directory, { recursive: true });
  const file = join(directory, 'dev-api-key');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, file };
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
