import { parseDecimalInteger } from '../../contract/decimal-integer.ts';
import { ConfigError } from './config-error.ts';

/** How spans are sampled: OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. */
export interface TraceSampling {
  /** What decides a trace that starts here (and, without `parentBased`, every trace). */
  readonly root: 'always_on' | 'always_off' | 'traceidratio';
  /** A trace continued from a caller's `traceparent` follows the caller's decision. */
  readonly parentBased: boolean;
  /** The share of traces kept by `traceidratio`, from 0 to 1. */
  readonly ratio: number;
}

/** Where and how spans are exported (OTLP over HTTP), read from the standard OTEL_* variables. */
export interface TracingConfig {
  /** The full address spans are sent to, e.g. http://localhost:4318/v1/traces. */
  readonly endpoint: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  /** Sent with every export (a collector's credentials, typically): never logged. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, service.name aside. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampling: TraceSampling;
}

const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
const DEFAULT_ENDPOINT = 'http://localhost:4318';
const TRACES_PATH = 'v1/traces';
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_SERVICE_NAME = 'petstore';

/**
 * Tracing is on when OTEL_TRACES_EXPORTER is `otlp`, or when it is unset and an OTLP endpoint is
 * configured; `none` and OTEL_SDK_DISABLED=true turn it off. Returns undefined when off. The
 * variables' meanings are OpenTelemetry's (opentelemetry.io/docs/specs/otel/configuration).
 */
export function readTracingConfig(environment: Readonly<Record<string, string | undefined>>): TracingConfig | undefined {
  const read = (name: string): string | undefined => {
    const value = environment[name]?.trim();
    return value === '' ? undefined : value;
  };
  const disabled = read('OTEL_SDK_DISABLED');
  if (disabled !== undefined && !['true', 'false'].includes(disabled.toLowerCase())) {
    throw new ConfigError(`OTEL_SDK_DISABLED is invalid (${JSON.stringify(disabled)}): true or false`);
  }
  if (disabled?.toLowerCase() === 'true') return undefined;
  const exporter = read('OTEL_TRACES_EXPORTER');
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    throw new ConfigError(`OTEL_TRACES_EXPORTER is invalid (${JSON.stringify(exporter)}): this service exports traces with otlp, or none`);
  }
  const tracesEndpoint = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (exporter === 'none' || (exporter === undefined && tracesEndpoint === undefined && baseEndpoint === undefined)) return undefined;

  const endpoint = tracesEndpoint !== undefined
    ? httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint)
    : `${httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', baseEndpoint ?? DEFAULT_ENDPOINT).replace(/\/*$/, '/')}${TRACES_PATH}`;
  return Object.freeze({
    endpoint,
    protocol: readProtocol(read),
    headers: Object.freeze({ ...readHeaders(read, 'OTEL_EXPORTER_OTLP_HEADERS'), ...readHeaders(read, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') }),
    timeoutMs: readTimeout(read),
    ...readResource(read),
    sampling: readSampling(read),
  });
}

function httpUrl(name: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new ConfigError(`${name} is invalid: an http(s) URL such as http://collector:4318 is expected`);
  }
  return value;
}

function readProtocol(read: (name: string) => string | undefined): TracingConfig['protocol'] {
  const name = read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = read(name) ?? 'http/protobuf';
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new ConfigError(`${name} is invalid (${JSON.stringify(protocol)}): http/protobuf or http/json (grpc is not supported)`);
  }
  return protocol as TracingConfig['protocol'];
}

function readTimeout(read: (name: string) => string | undefined): number {
  const name = read('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT';
  const value = read(name);
  if (value === undefined) return DEFAULT_TIMEOUT_MS;
  if (parseDecimalInteger(value, 1, 9_999_999) === undefined) throw new ConfigError(`${name} is invalid (${JSON.stringify(value)}): milliseconds, a whole number from 1`);
  return Number(value);
}

/**
 * `key=value` pairs separated by commas, values percent-encoded (the W3C Baggage format the
 * specification names). Header values hold credentials: a message never repeats them.
 */
function readPairs(read: (name: string) => string | undefined, name: string, what: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of (read(name) ?? '').split(',')) {
    if (item.trim() === '') continue;
    const equals = item.indexOf('=');
    const key = item.slice(0, equals).trim();
    let value: string | undefined;
    try {
      value = equals > 0 ? decodeURIComponent(item.slice(equals + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (key === '' || value === undefined) throw new ConfigError(`${name} is invalid: ${what} as key=value pairs separated by commas, values percent-encoded`);
    pairs[key] = value;
  }
  return pairs;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function readHeaders(read: (name: string) => string | undefined, name: string): Record<string, string> {
  const headers = readPairs(read, name, 'headers');
  for (const [key, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(key) || /[\x00-\x08\x0a-\x1f\x7f]/.test(value)) {
      throw new ConfigError(`${name} is invalid: ${JSON.stringify(key)} is not a header name, or its value holds a control character`);
    }
  }
  return headers;
}

function readResource(read: (name: string) => string | undefined): Pick<TracingConfig, 'serviceName' | 'resourceAttributes'> {
  const { 'service.name': namedThere, ...resourceAttributes } = readPairs(read, 'OTEL_RESOURCE_ATTRIBUTES', 'resource attributes');
  return { serviceName: read('OTEL_SERVICE_NAME') ?? namedThere ?? DEFAULT_SERVICE_NAME, resourceAttributes: Object.freeze(resourceAttributes) };
}

function readSampling(read: (name: string) => string | undefined): TraceSampling {
  const sampler = read('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!(SAMPLERS as readonly string[]).includes(sampler)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER is invalid (${JSON.stringify(sampler)}): one of ${SAMPLERS.join(', ')}`);
  }
  const parentBased = sampler.startsWith('parentbased_');
  const root = (parentBased ? sampler.slice('parentbased_'.length) : sampler) as TraceSampling['root'];
  const argument = read('OTEL_TRACES_SAMPLER_ARG');
  let ratio = 1;
  if (root === 'traceidratio' && argument !== undefined) {
    ratio = /^(0|1|0?\.[0-9]+|[01]\.[0-9]*)$/.test(argument) ? Number(argument) : Number.NaN;
    if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG is invalid (${JSON.stringify(argument)}): a ratio from 0 to 1, e.g. 0.25`);
  }
  return Object.freeze({ root, parentBased, ratio });
}
