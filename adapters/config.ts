import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

export const DEPLOYMENTS = ['development', 'staging', 'production'] as const;
export type Deployment = (typeof DEPLOYMENTS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const BASE_URL = '^https?://[^\\s/?#]+(/[^\\s?#]*)?/v1$';
const API_KEY = '[A-Za-z0-9\\-._~+/]{16,}=*';

/** The environment variables the service reads, with what each may hold. */
const EnvironmentSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,4})$', description: 'TCP port (0 picks a free one)' })),
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'interface to listen on' })),
  PETSTORE_ENV: Type.Optional(Type.Union(DEPLOYMENTS.map((name) => Type.Literal(name)))),
  PETSTORE_DATABASE: Type.Optional(Type.String({ minLength: 1 })),
  PETSTORE_DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: 'an integer from 1 to 9999' })),
  PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,7}$', description: 'milliseconds, an integer from 1 to 99999999' })),
  PETSTORE_API_KEYS: Type.Optional(Type.String({ pattern: `^(${API_KEY})(,${API_KEY})*$`, description: 'comma-separated keys of at least 16 characters' })),
  PETSTORE_PRODUCTION_URL: Type.Optional(Type.String({ pattern: BASE_URL, description: 'an http(s) URL ending in /v1' })),
  PETSTORE_STAGING_URL: Type.Optional(Type.String({ pattern: BASE_URL, description: 'an http(s) URL ending in /v1' })),
  PETSTORE_LOG_LEVEL: Type.Optional(Type.Union(LOG_LEVELS.map((name) => Type.Literal(name)))),
});
const EnvironmentCheck = TypeCompiler.Compile(EnvironmentSchema);

/** Where the pets live: a SQLite file, or a PostgreSQL database that many instances may share. */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      /** Connections per instance. */
      readonly poolSize: number;
      /** Longest a statement may run, and a request may wait for a connection. */
      readonly statementTimeoutMs: number;
    };

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly deployment: Deployment;
  readonly database: DatabaseConfig;
  readonly apiKeys: readonly string[];
  readonly productionUrl: string | undefined;
  readonly stagingUrl: string | undefined;
  /** The deployment's public base address with /v1; undefined in development until the port is known. */
  readonly publicBaseUrl: string | undefined;
  readonly logLevel: (typeof LOG_LEVELS)[number];
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Reads and checks the environment once, at start; the message names the variable that is wrong. */
export function loadConfig(environment: Record<string, string | undefined>): Config {
  const relevant = Object.fromEntries(
    Object.keys(EnvironmentSchema.properties)
      .filter((name) => environment[name] !== undefined && environment[name] !== '')
      .map((name) => [name, environment[name]]),
  );
  if (!EnvironmentCheck.Check(relevant)) {
    const error = EnvironmentCheck.Errors(relevant).First()!;
    const name = error.path.split('/')[1] ?? '';
    const hint = (EnvironmentSchema.properties as Record<string, { description?: string }>)[name]?.description;
    throw new ConfigError(`${name} is invalid (${JSON.stringify(relevant[name])}): ${hint ?? error.message}`);
  }
  const env = relevant as Static<typeof EnvironmentSchema>;
  const port = Number(env.PORT ?? '3000');
  if (port > 65535) throw new ConfigError(`PORT is invalid (${JSON.stringify(env.PORT)}): at most 65535`);
  const deployment = env.PETSTORE_ENV ?? 'development';
  const publicBaseUrl = deployment === 'production' ? env.PETSTORE_PRODUCTION_URL : deployment === 'staging' ? env.PETSTORE_STAGING_URL : undefined;
  if (deployment !== 'development' && publicBaseUrl === undefined) {
    const name = deployment === 'production' ? 'PETSTORE_PRODUCTION_URL' : 'PETSTORE_STAGING_URL';
    throw new ConfigError(`${name} is required when PETSTORE_ENV is ${deployment}: the public base address, e.g. https://api.example.com/v1`);
  }
  return Object.freeze({
    port,
    host: env.HOST ?? '127.0.0.1',
    deployment,
    database: databaseConfig(env),
    apiKeys: Object.freeze(env.PETSTORE_API_KEYS?.split(',') ?? []),
    productionUrl: env.PETSTORE_PRODUCTION_URL,
    stagingUrl: env.PETSTORE_STAGING_URL,
    publicBaseUrl,
    logLevel: env.PETSTORE_LOG_LEVEL ?? 'info',
  });
}

const POSTGRES_SCHEME = /^postgres(ql)?:/i;

/** A postgres:// or postgresql:// URL selects PostgreSQL; anything else is a SQLite path. */
function databaseConfig(env: Static<typeof EnvironmentSchema>): DatabaseConfig {
  const value = env.PETSTORE_DATABASE ?? './data/petstore.db';
  if (!POSTGRES_SCHEME.test(value)) return { kind: 'sqlite', path: value };
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  // The value may hold a password: the message never repeats it.
  if (!url || !value.slice(url.protocol.length).startsWith('//')) {
    throw new ConfigError('PETSTORE_DATABASE is invalid: a PostgreSQL URL looks like postgres://user:password@host:5432/database');
  }
  return {
    kind: 'postgres',
    url: value,
    poolSize: Number(env.PETSTORE_DATABASE_POOL_SIZE ?? DEFAULT_POOL_SIZE),
    statementTimeoutMs: Number(env.PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS ?? DEFAULT_STATEMENT_TIMEOUT_MS),
  };
}
