import { availableParallelism } from 'node:os';
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ConfigError } from './config-error.ts';
import { databaseConfig } from './database-config.ts';
import type { DatabaseConfig } from './database-config.ts';
import { readTracingConfig } from './tracing-config.ts';
import type { TracingConfig } from './tracing-config.ts';
import { IDEMPOTENCY_WINDOW_MS } from '../../application/index.ts';
import type { RetryPolicy } from '../../application/index.ts';

export const DEPLOYMENTS = ['development', 'staging', 'production'] as const;
export type Deployment = (typeof DEPLOYMENTS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const BASE_URL = '^https?://[^\\s/?#]+(/[^\\s?#]*)?/v1$';
const WHOLE_NUMBER = '^[1-9][0-9]{0,8}$';
// <requests per second>,<burst>: a decimal rate (0.5 is one request every two seconds) and a whole burst.
const RATE_LIMIT = '^(off|[0-9]{1,6}(\\.[0-9]{1,3})?,[1-9][0-9]{0,5})$';
const API_KEY_CHARACTERS = /^[A-Za-z0-9\-._~+/]+=*$/;
const API_KEY_MIN_LENGTH = 16;
const DURATION = '[1-9][0-9]{0,8}(ms|s|m|h)';
const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const ORIGIN = '[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#,]+';

/** One of a few words, described in words (a validator's own message would say "Expected union value"). */
function oneOf<Value extends string>(values: readonly Value[]) {
  return Type.Optional(Type.Union(values.map((value) => Type.Literal(value)), { description: `one of ${values.join(', ')}` }));
}

function wholeNumber(unit: string) {
  return Type.Optional(Type.String({ pattern: WHOLE_NUMBER, description: `${unit}, a whole number from 1` }));
}

/** The environment variables the service reads, with what each may hold. */
const EnvironmentSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,4})$', description: 'TCP port (0 picks a free one)' })),
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'interface to listen on' })),
  PETSTORE_ENV: oneOf(DEPLOYMENTS),
  // Told apart and checked in databaseConfig.
  PETSTORE_DATABASE: Type.Optional(Type.String({ minLength: 1 })),
  PETSTORE_DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: 'an integer from 1 to 9999' })),
  PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,7}$', description: 'milliseconds, an integer from 1 to 99999999' })),
  PETSTORE_IDEMPOTENCY_KEY_TTL_MS: wholeNumber('milliseconds'),
  // Checked key by key in readApiKeys, whose messages never repeat a key.
  PETSTORE_API_KEYS: Type.Optional(Type.String()),
  PETSTORE_PRODUCTION_URL: Type.Optional(Type.String({ pattern: BASE_URL, description: 'an http(s) URL ending in /v1' })),
  PETSTORE_STAGING_URL: Type.Optional(Type.String({ pattern: BASE_URL, description: 'an http(s) URL ending in /v1' })),
  PETSTORE_LOG_LEVEL: oneOf(LOG_LEVELS),
  PETSTORE_HEADERS_TIMEOUT_MS: wholeNumber('milliseconds'),
  PETSTORE_REQUEST_TIMEOUT_MS: wholeNumber('milliseconds'),
  PETSTORE_KEEP_ALIVE_TIMEOUT_MS: wholeNumber('milliseconds'),
  PETSTORE_SHUTDOWN_GRACE_MS: wholeNumber('milliseconds'),
  PETSTORE_SHUTDOWN_DELAY_MS: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,5})$', description: 'milliseconds, a whole number from 0 to 999999' })),
  PETSTORE_MAX_HEADER_BYTES: wholeNumber('bytes'),
  PETSTORE_MAX_CONNECTIONS: wholeNumber('connections'),
  PETSTORE_MAX_CONNECTIONS_PER_CLIENT: wholeNumber('connections'),
  PETSTORE_WAITING_TIMEOUT_UNDER_PRESSURE_MS: wholeNumber('milliseconds'),
  PETSTORE_EVENT_STREAMS_MAX: wholeNumber('open event streams'),
  PETSTORE_EVENT_STREAMS_MAX_PER_CLIENT: wholeNumber('open event streams'),
  PETSTORE_EVENT_STREAM_HEARTBEAT_MS: wholeNumber('milliseconds'),
  PETSTORE_WEBHOOKS_ALLOW_PRIVATE: oneOf(['true', 'false']),
  PETSTORE_WEBHOOK_TIMEOUT_MS: wholeNumber('milliseconds'),
  PETSTORE_WEBHOOK_RETRY_SCHEDULE: Type.Optional(Type.String({
    pattern: `^${DURATION}(,${DURATION}){0,29}$`, description: 'comma-separated waits before each retry, each a whole number and ms, s, m or h, e.g. 5s,5m,30m,2h (at most 30)',
  })),
  PETSTORE_WEBHOOK_LEASE_MS: wholeNumber('milliseconds'),
  PETSTORE_WEBHOOKS_MAX_PER_KEY: wholeNumber('subscriptions'),
  PETSTORE_WEBHOOK_SECRET_OVERLAP_MS: wholeNumber('milliseconds'),
  PETSTORE_WEBHOOK_MAX_CONNECTIONS: wholeNumber('connections'),
  PETSTORE_RATE_LIMIT: Type.Optional(Type.String({ pattern: RATE_LIMIT, description: '"off" or <requests per second>,<burst>, e.g. 10,20' })),
  PETSTORE_KEY_FAILURE_LIMIT: Type.Optional(Type.String({
    pattern: RATE_LIMIT, description: '"off" or <failed attempts per second>,<burst>, e.g. 1,100: requests without a valid key, per client address',
  })),
  PETSTORE_METRICS: oneOf(['true', 'false']),
  PETSTORE_WORKERS: Type.Optional(Type.String({ pattern: '^(auto|[1-9][0-9]{0,2})$', description: '"auto" (one per core) or a number of processes from 1 to 999' })),
  PETSTORE_CORS_ORIGINS: Type.Optional(Type.String({
    pattern: `^(\\*|${ORIGIN}(,${ORIGIN})*)$`,
    description: '* or comma-separated origins such as https://app.example.com (scheme, host and port; no path)',
  })),
});
const EnvironmentCheck = TypeCompiler.Compile(EnvironmentSchema);

/** Every variable the service reads (besides OpenTelemetry's OTEL_*). */
export const CONFIGURATION_VARIABLES: readonly string[] = Object.freeze(Object.keys(EnvironmentSchema.properties));


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
  readonly limits: ServerLimits;
  /** Per API key; undefined when off. */
  readonly rateLimit: RateLimitPolicy | undefined;
  /** Requests without a valid key, per client address; undefined when off. */
  readonly keyFailureLimit: RateLimitPolicy | undefined;
  /** Whether GET /metrics is served. */
  readonly metrics: boolean;
  /** Origins a browser may call the API from (normalised, as browsers send them), or ['*'] for any; empty: none. */
  readonly corsOrigins: readonly string[];
  /** OpenTelemetry traces, from the standard OTEL_* variables; undefined when off. */
  readonly tracing: TracingConfig | undefined;
  /**
   * After SIGTERM, how long the service goes on serving (with /readyz already 503) before it stops
   * accepting: the time a load balancer takes to stop sending it new requests.
   */
  readonly shutdownDelayMs: number;
  /** How long an `Idempotency-Key` is remembered; expired records are deleted in the background. */
  readonly idempotencyKeyTtlMs: number;
  readonly eventStreams: EventStreamLimits;
  /** Consumer group claims waiting for events (`waitMs` > 0) on this instance at once, of every key; one more is refused with 503 and Retry-After. */
  readonly maxWaitingClaims: number;
  /** How webhooks are delivered (experimental). */
  readonly webhooks: WebhookDelivery;
  /** Service processes sharing the port (one per core for `auto`); 1: this process serves alone. */
  readonly workers: number;
}

/** What open event streams (`GET /v1/events` as Server-Sent Events) may cost. */
export interface EventStreamLimits {
  /**
   * Streams open at once; one more is refused with 503 and Retry-After. By default half of
   * `maxConnections`, below the mark where waiting connections (streams among them) give way.
   */
  readonly maxStreams: number;
  /**
   * Streams open at once from one client address (an IPv6 client by its /64); one more is refused with
   * 429 and Retry-After. By default half of `maxConnectionsPerClient`.
   */
  readonly maxStreamsPerClient: number;
  /** A stream silent this long sends a comment line, so that proxies keep it open. */
  readonly heartbeatMs: number;
}

export const DEFAULT_EVENT_STREAM_HEARTBEAT_MS = 15_000;

/**
 * The share of the connection caps (in all, and of each client) that event streams may take unless
 * `PETSTORE_EVENT_STREAMS_MAX` and `PETSTORE_EVENT_STREAMS_MAX_PER_CLIENT` say otherwise.
 */
export const STREAM_SHARE_OF_CONNECTIONS = 1 / 2;

/**
 * The share of the connection cap that waiting consumer group claims may take in all: with the streams'
 * half, three quarters, the mark past which waiting connections give way (`PRESSURE_SHARE`), so that
 * waiting work never takes the places other requests come in by.
 */
export const WAITING_CLAIM_SHARE_OF_CONNECTIONS = 1 / 4;

/** How webhooks are delivered: the configuration's `webhooks` part. */
export interface WebhookDelivery {
  /** Allows targets on loopback, link-local and private addresses (development and tests). */
  readonly allowPrivate: boolean;
  /** One attempt, from connecting to the end of the answer. */
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  /** How long an instance holds a subscription without renewing: how soon another takes over from one that died. */
  readonly leaseMs: number;
  /** Subscriptions one API key may have. */
  readonly maxPerKey: number;
  /** After a rotation, how long the replaced secret keeps signing beside the new one. */
  readonly secretOverlapMs: number;
  /** Attempts in flight at once in one process, over all subscriptions (each subscription has one at a time, on its own connection). */
  readonly maxConnections: number;
}

export const DEFAULT_WEBHOOK_DELIVERY: WebhookDelivery = Object.freeze({
  allowPrivate: false,
  timeoutMs: 10_000,
  // The Standard Webhooks example schedule: 75 h 35 min from the first failure to the last retry.
  retry: Object.freeze({ scheduleMs: Object.freeze(['5s', '5m', '30m', '2h', '5h', '10h', '14h', '20h', '24h'].map(durationMs)) }),
  leaseMs: 30_000,
  maxPerKey: 100,
  secretOverlapMs: 24 * 3_600_000,
  maxConnections: 1000,
});

/** What protects the process from slow, large or too many clients. */
export interface ServerLimits {
  /** From the first byte of a request to the end of its headers. */
  readonly headersTimeoutMs: number;
  /** From the first byte of a request to the end of its body. */
  readonly requestTimeoutMs: number;
  /** How long an idle kept-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
  /** How long requests in flight may take to finish once the listener is closed. */
  readonly shutdownGraceMs: number;
  /** Request line plus headers. */
  readonly maxHeaderBytes: number;
  /** Open connections at once; more are closed as they arrive. */
  readonly maxConnections: number;
  /** Open connections at once from one client address; more from it are closed as they arrive. */
  readonly maxConnectionsPerClient: number;
  /**
   * Once the open connections pass three quarters of `maxConnections`: how long a connection may wait
   * with no request in flight (silent, sending its headers, or idle between requests) before it is closed.
   */
  readonly waitingTimeoutUnderPressureMs: number;
}

/** A token bucket per API key: `burst` requests at once, refilled at `perSecond`. */
export interface RateLimitPolicy {
  readonly perSecond: number;
  readonly burst: number;
}

/** A client address may send 100 requests without a valid key at once, then one a second: typos pass, guessing at speed does not. */
export const DEFAULT_KEY_FAILURE_LIMIT: RateLimitPolicy = Object.freeze({ perSecond: 1, burst: 100 });

export const DEFAULT_LIMITS: ServerLimits = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  shutdownGraceMs: 10_000,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 1024,
  maxConnectionsPerClient: 256,
  waitingTimeoutUnderPressureMs: 1_000,
});

export { ConfigError };
export { DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS, withoutPassword } from './database-config.ts';
export type { DatabaseConfig } from './database-config.ts';

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
    throw new ConfigError(`${name} is invalid${quotedUnlessSecret(name, relevant[name])}: ${hint ?? 'not a value it takes (see the README, Configuration)'}`);
  }
  const env = relevant as Static<typeof EnvironmentSchema>;
  const port = Number(env.PORT ?? '3000');
  if (port > 65535) throw new ConfigError(`PORT is invalid (${JSON.stringify(env.PORT)}): at most 65535`);
  refuseCredentials('PETSTORE_PRODUCTION_URL', env.PETSTORE_PRODUCTION_URL);
  refuseCredentials('PETSTORE_STAGING_URL', env.PETSTORE_STAGING_URL);
  const deployment = env.PETSTORE_ENV ?? 'development';
  const publicBaseUrl = deployment === 'production' ? env.PETSTORE_PRODUCTION_URL : deployment === 'staging' ? env.PETSTORE_STAGING_URL : undefined;
  if (deployment !== 'development' && publicBaseUrl === undefined) {
    const name = deployment === 'production' ? 'PETSTORE_PRODUCTION_URL' : 'PETSTORE_STAGING_URL';
    throw new ConfigError(`${name} is required when PETSTORE_ENV is ${deployment}: the public base address, e.g. https://api.example.com/v1`);
  }
  const limits = readLimits(env);
  return Object.freeze({
    port,
    host: env.HOST ?? '127.0.0.1',
    deployment,
    database: databaseConfig(env),
    apiKeys: readApiKeys(env.PETSTORE_API_KEYS),
    productionUrl: env.PETSTORE_PRODUCTION_URL,
    stagingUrl: env.PETSTORE_STAGING_URL,
    publicBaseUrl,
    logLevel: env.PETSTORE_LOG_LEVEL ?? 'info',
    limits,
    rateLimit: readRateLimit('PETSTORE_RATE_LIMIT', env.PETSTORE_RATE_LIMIT),
    keyFailureLimit: env.PETSTORE_KEY_FAILURE_LIMIT === undefined ? DEFAULT_KEY_FAILURE_LIMIT : readRateLimit('PETSTORE_KEY_FAILURE_LIMIT', env.PETSTORE_KEY_FAILURE_LIMIT),
    // Metrics reveal traffic and volumes: served by default only where nobody outside is looking.
    metrics: env.PETSTORE_METRICS === undefined ? deployment === 'development' : env.PETSTORE_METRICS === 'true',
    corsOrigins: Object.freeze(env.PETSTORE_CORS_ORIGINS?.split(',').map(normalisedOrigin) ?? []),
    tracing: readTracingConfig(environment),
    shutdownDelayMs: Number(env.PETSTORE_SHUTDOWN_DELAY_MS ?? '0'),
    idempotencyKeyTtlMs: Number(env.PETSTORE_IDEMPOTENCY_KEY_TTL_MS ?? IDEMPOTENCY_WINDOW_MS),
    eventStreams: Object.freeze({
      maxStreams: Number(env.PETSTORE_EVENT_STREAMS_MAX ?? Math.floor(limits.maxConnections * STREAM_SHARE_OF_CONNECTIONS)),
      maxStreamsPerClient: Number(env.PETSTORE_EVENT_STREAMS_MAX_PER_CLIENT ?? Math.floor(limits.maxConnectionsPerClient * STREAM_SHARE_OF_CONNECTIONS)),
      heartbeatMs: Number(env.PETSTORE_EVENT_STREAM_HEARTBEAT_MS ?? DEFAULT_EVENT_STREAM_HEARTBEAT_MS),
    }),
    maxWaitingClaims: Math.floor(limits.maxConnections * WAITING_CLAIM_SHARE_OF_CONNECTIONS),
    webhooks: readWebhookDelivery(env),
    workers: env.PETSTORE_WORKERS === 'auto' ? availableParallelism() : Number(env.PETSTORE_WORKERS ?? '1'),
  });
}

/** `5s`, `30m`, `250ms`: a duration as the configuration writes it, in milliseconds. */
function durationMs(text: string): number {
  const [, amount, unit] = /^([0-9]+)([a-z]+)$/.exec(text)!;
  return Number(amount) * DURATION_UNIT_MS[unit!]!;
}

function readWebhookDelivery(env: Static<typeof EnvironmentSchema>): WebhookDelivery {
  const defaults = DEFAULT_WEBHOOK_DELIVERY;
  const number = (text: string | undefined, fallback: number) => (text === undefined ? fallback : Number(text));
  return Object.freeze({
    allowPrivate: env.PETSTORE_WEBHOOKS_ALLOW_PRIVATE === 'true',
    timeoutMs: number(env.PETSTORE_WEBHOOK_TIMEOUT_MS, defaults.timeoutMs),
    retry: env.PETSTORE_WEBHOOK_RETRY_SCHEDULE === undefined
      ? defaults.retry
      : Object.freeze({ scheduleMs: Object.freeze(env.PETSTORE_WEBHOOK_RETRY_SCHEDULE.split(',').map(durationMs)) }),
    leaseMs: number(env.PETSTORE_WEBHOOK_LEASE_MS, defaults.leaseMs),
    maxPerKey: number(env.PETSTORE_WEBHOOKS_MAX_PER_KEY, defaults.maxPerKey),
    secretOverlapMs: number(env.PETSTORE_WEBHOOK_SECRET_OVERLAP_MS, defaults.secretOverlapMs),
    maxConnections: number(env.PETSTORE_WEBHOOK_MAX_CONNECTIONS, defaults.maxConnections),
  });
}

/** A public base is published (`Location`, the document's `servers`, every CloudEvent's `source`): it may hold no user or password. */
function refuseCredentials(name: string, value: string | undefined): void {
  if (value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is invalid: an http(s) URL ending in /v1`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(`${name} is invalid: it holds a user or password, which every Location, the OpenAPI document and every event's source would publish; give the address alone, e.g. https://api.example.com/v1`);
  }
}

// Variables whose values may hold a secret: a key, or a password inside a URL.
const SECRET_VARIABLES = new Set(['PETSTORE_API_KEYS', 'PETSTORE_DATABASE', 'PETSTORE_PRODUCTION_URL', 'PETSTORE_STAGING_URL']);

/** The value, quoted, to repeat in a message; nothing for a variable that may hold a secret. */
function quotedUnlessSecret(name: string, value: string | undefined): string {
  return SECRET_VARIABLES.has(name) ? '' : ` (${JSON.stringify(value)})`;
}

/** Comma-separated keys; a message names the bad key by its position and what is wrong, never its text. */
function readApiKeys(text: string | undefined): readonly string[] {
  const keys = text?.split(',') ?? [];
  keys.forEach((key, index) => {
    const problem =
      key === ''
        ? 'is empty (two commas in a row, or one at an end)'
        : key.length < API_KEY_MIN_LENGTH
          ? `is shorter than ${API_KEY_MIN_LENGTH} characters`
          : !API_KEY_CHARACTERS.test(key)
            ? 'holds a character other than A-Z, a-z, 0-9, - . _ ~ + / (and = only at its end)'
            : undefined;
    if (problem !== undefined) {
      throw new ConfigError(`PETSTORE_API_KEYS is invalid: the ${ordinal(index + 1)} of its ${keys.length} comma-separated keys ${problem}`);
    }
  });
  return Object.freeze(keys);
}

function ordinal(position: number): string {
  const lastTwo = position % 100;
  const suffix = lastTwo >= 11 && lastTwo <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][position % 10] ?? 'th');
  return `${position}${suffix}`;
}

function readLimits(env: Static<typeof EnvironmentSchema>): ServerLimits {
  const number = (text: string | undefined, fallback: number) => (text === undefined ? fallback : Number(text));
  const limits = {
    headersTimeoutMs: number(env.PETSTORE_HEADERS_TIMEOUT_MS, DEFAULT_LIMITS.headersTimeoutMs),
    requestTimeoutMs: number(env.PETSTORE_REQUEST_TIMEOUT_MS, DEFAULT_LIMITS.requestTimeoutMs),
    keepAliveTimeoutMs: number(env.PETSTORE_KEEP_ALIVE_TIMEOUT_MS, DEFAULT_LIMITS.keepAliveTimeoutMs),
    shutdownGraceMs: number(env.PETSTORE_SHUTDOWN_GRACE_MS, DEFAULT_LIMITS.shutdownGraceMs),
    maxHeaderBytes: number(env.PETSTORE_MAX_HEADER_BYTES, DEFAULT_LIMITS.maxHeaderBytes),
    maxConnections: number(env.PETSTORE_MAX_CONNECTIONS, DEFAULT_LIMITS.maxConnections),
    maxConnectionsPerClient: number(env.PETSTORE_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_LIMITS.maxConnectionsPerClient),
    waitingTimeoutUnderPressureMs: number(env.PETSTORE_WAITING_TIMEOUT_UNDER_PRESSURE_MS, DEFAULT_LIMITS.waitingTimeoutUnderPressureMs),
  };
  // Node measures the headers against their own timeout first; a shorter request timeout would never let it fire.
  if (limits.requestTimeoutMs < limits.headersTimeoutMs) {
    throw new ConfigError(
      `PETSTORE_REQUEST_TIMEOUT_MS is invalid (${limits.requestTimeoutMs}): it must be at least PETSTORE_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs})`,
    );
  }
  return Object.freeze(limits);
}

function readRateLimit(name: string, text: string | undefined): RateLimitPolicy | undefined {
  if (text === undefined || text === 'off') return undefined;
  const [rate, burst] = text.split(',').map(Number) as [number, number];
  if (rate <= 0) throw new ConfigError(`${name} is invalid (${JSON.stringify(text)}): the rate must be above 0`);
  return Object.freeze({ perSecond: rate, burst });
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
