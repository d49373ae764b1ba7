import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ConfigError } from './config-error.ts';

export const DEPLOYMENTS = ['development', 'staging', 'production'] as const;
export type Deployment = (typeof DEPLOYMENTS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const BASE_URL = '^https?://[^\\s/?#]+(/[^\\s?#]*)?/v1$';
const API_KEY = '[A-Za-z0-9\\-._~+/]{16,}=*';
const ORIGIN = '[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#,]+';

/** The environment variables the service reads, with what each may hold. */
const EnvironmentSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,4})$', description: 'TCP port (0 picks a free one)' })),
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'interface to listen on' })),
  PETSTORE_ENV: Type.Optional(Type.Union(DEPLOYMENTS.map((name) => Type.Literal(name)))),
  PETSTORE_DATABASE: Type.Optional(Type.String({ minLength: 1 })),
  PETSTORE_API_KEYS: Type.Optional(Type.String({ pattern: `^(${API_KEY})(,${API_KEY})*$`, description: 'comma-separated keys of at least 16 characters' })),
  PETSTORE_PRODUCTION_URL: Type.Optional(Type.String({ pattern: BASE_URL, description: 'an http(s) URL ending in /v1' })),
  PETSTORE_STAGING_URL: Type.Optional(Type.String({ pattern: BASE_URL, description: 'an http(s) URL ending in /v1' })),
  PETSTORE_LOG_LEVEL: Type.Optional(Type.Union(LOG_LEVELS.map((name) => Type.Literal(name)))),
  PETSTORE_METRICS: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true or false' })),
  PETSTORE_CORS_ORIGINS: Type.Optional(Type.String({
    pattern: `^(\\*|${ORIGIN}(,${ORIGIN})*)$`,
    description: '* or comma-separated origins such as https://app.example.com (scheme, host and port; no path)',
  })),
});
const EnvironmentCheck = TypeCompiler.Compile(EnvironmentSchema);

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly deployment: Deployment;
  /** A SQLite file path. */
  readonly database: string;
  readonly apiKeys: readonly string[];
  readonly productionUrl: string | undefined;
  readonly stagingUrl: string | undefined;
  /** The deployment's public base address with /v1; undefined in development until the port is known. */
  readonly publicBaseUrl: string | undefined;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  /** Whether GET /metrics is served. */
  readonly metrics: boolean;
  /** Origins a browser may call the API from (normalised, as browsers send them), or ['*'] for any; empty: none. */
  readonly corsOrigins: readonly string[];
}

export { ConfigError };

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
    database: env.PETSTORE_DATABASE ?? './data/petstore.db',
    apiKeys: Object.freeze(env.PETSTORE_API_KEYS?.split(',') ?? []),
    productionUrl: env.PETSTORE_PRODUCTION_URL,
    stagingUrl: env.PETSTORE_STAGING_URL,
    publicBaseUrl,
    logLevel: env.PETSTORE_LOG_LEVEL ?? 'info',
    // Metrics reveal traffic and volumes: served by default only where nobody outside is looking.
    metrics: env.PETSTORE_METRICS === undefined ? deployment === 'development' : env.PETSTORE_METRICS === 'true',
    corsOrigins: Object.freeze(env.PETSTORE_CORS_ORIGINS?.split(',').map(normalisedOrigin) ?? []),
  });
}

/** An origin as a browser serialises it (lower-case host, no default port), so comparing strings is enough. */
function normalisedOrigin(origin: string): string {
  if (origin === '*') return origin;
  try {
    return new URL(origin).origin;
  } catch {
    throw new ConfigError(`PETSTORE_CORS_ORIGINS is invalid: ${JSON.stringify(origin)} is not an origin`);
  }
}

/** The base address of a service listening on `host:port` of this machine, with /v1 (development's public base). */
export function localBaseUrl(host: string, port: number): string {
  const hostInUrl = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${hostInUrl}:${port}/v1`;
}
