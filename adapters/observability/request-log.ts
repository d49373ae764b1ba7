import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { Logger } from 'pino';

// A client's own request id is kept when it is short visible ASCII; anything else is replaced.
const ACCEPTABLE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** How a request was answered, for its one record and its trace: the route template (null when none matched), the path, the status, the key's id. */
export interface Answered {
  readonly route: string | null;
  readonly path: string;
  readonly status: number;
  readonly keyId: string | null;
}

export interface RequestFields {
  readonly requestId: string;
  readonly method: string;
  readonly route: string | null;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  readonly apiKeyId: string | null;
}

/** Milliseconds since `started` (a `performance.now()`), to the microsecond: plenty, and a rounded number is cheaper to print. */
export function millisecondsSince(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}

// The last group of a UUID: 12 hex digits, 48 bits.
const COUNTER_LIMIT = 2 ** 48;

/**
 * New request ids shaped as UUIDs (version 4): the first 74 random bits are drawn once (and again if the
 * counter ever wraps), the last 48 bits count. Unique across instances and restarts as random UUIDs are
 * in practice (two processes share a prefix with odds of 2^-74), at a fraction of a random UUID's cost a request.
 */
export function requestIdSource(random: () => string = randomUUID, first = 0): () => string {
  let prefix = random().slice(0, 24);
  let counter = first;
  return () => {
    if (counter >= COUNTER_LIMIT) {
      prefix = random().slice(0, 24);
      counter = 0;
    }
    return prefix + (counter++).toString(16).padStart(12, '0');
  };
}

/** A new request id (`requestIdSource`): for an answer whose client offered none it may keep. */
export const newRequestId = requestIdSource();

/** The client's X-Request-Id when acceptable, else a new one. */
export function requestIdFor(offered: string | string[] | undefined): string {
  return typeof offered === 'string' && ACCEPTABLE_REQUEST_ID.test(offered) ? offered : newRequestId();
}

const symbols = pino.symbols as unknown as { streamSym: symbol; timeSym: symbol; chindingsSym: symbol };

interface LoggerInternals {
  [key: symbol]: unknown;
}

/**
 * Writes the request's line at level info. The line is the one `logger.info(fields, 'request')` would
 * write, formatted here: pino's general serialiser walks and escapes every key of every line, which
 * cost more than the rest of a cached listing. It goes to the logger's own destination, with the
 * logger's time and bindings, through the symbols pino exports for such integrations.
 */
export function requestLine(logger: Logger): (fields: RequestFields) => void {
  const internals = logger as unknown as LoggerInternals;
  const destination = internals[symbols.streamSym] as { write(line: string): void } | undefined;
  const time = internals[symbols.timeSym] as (() => string) | undefined;
  const bindings = internals[symbols.chindingsSym];
  const level = logger.levels.values.info;
  if (!destination || typeof time !== 'function' || typeof bindings !== 'string') {
    return (fields) => logger.info(fields, 'request');
  }
  return (fields) => {
    if (!logger.isLevelEnabled('info')) return;
    destination.write(
      `{"level":${level}${time()}${bindings},"requestId":${jsonString(fields.requestId)},"method":${jsonString(fields.method)},` +
        `"route":${fields.route === null ? 'null' : jsonString(fields.route)},"path":${jsonString(fields.path)},"status":${fields.status},` +
        `"durationMs":${fields.durationMs},"apiKeyId":${fields.apiKeyId === null ? 'null' : jsonString(fields.apiKeyId)},"msg":"request"}\n`,
    );
  };
}

// What JSON.stringify escapes in a string: quotation marks, backslashes, control characters, and surrogates when unpaired.
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON, exactly as JSON.stringify writes it: a request's strings rarely need escaping, and quoting is cheaper than serialising. */
export function jsonString(text: string): string {
  return NEEDS_ESCAPING.test(text) ? JSON.stringify(text) : `"${text}"`;
}
