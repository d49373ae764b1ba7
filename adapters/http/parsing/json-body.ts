import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import getRawBody from 'raw-body';
import inflate from 'inflation';
import { parse as parseContentType } from 'content-type';
import { HttpProblem } from '../pipeline/errors.ts';
import { decodeUtf8Strictly } from './strict-utf8.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The body's bytes as sent, after its Content-Encoding, within the size limit and the Content-Length:
 * read as bytes, so that they reach the strict UTF-8 check unchanged and are decoded once.
 */
function readBodyBytes(request: IncomingMessage): Promise<Buffer> {
  const length = request.headers['content-length'];
  const identity = (request.headers['content-encoding'] || 'identity') === 'identity';
  try {
    return getRawBody(inflate(request), { limit: BODY_LIMIT_BYTES, length: identity && length ? Number(length) : null });
  } catch (error) {
    // An unknown Content-Encoding is refused before anything is read.
    return Promise.reject(error as Error);
  }
}

/** A request's JSON body: the parsed value (undefined for an empty body), and the text it was parsed from. */
export interface JsonBody {
  readonly value: unknown;
  readonly raw: string;
}

/** Refuses bodies that are not JSON in UTF-8 before reading them; as middleware, before the next one, which finds the body with `jsonBodyOf`. */
export function requireJsonBody(mediaTypes: readonly string[]) {
  return function requireJsonBodyMiddleware(ctx: Context, next: Next): Promise<void> {
    return readJsonBody(ctx.req, mediaTypes).then((body) => {
      ctx.state.jsonBody = body;
      return next();
    });
  };
}

/** The body `requireJsonBody` read. */
export function jsonBodyOf(ctx: Context): JsonBody {
  return ctx.state.jsonBody as JsonBody;
}

/**
 * Checks the media type and charset (a body that is not JSON in UTF-8 is refused before it is read),
 * then reads the body and parses it. A refusal is a rejected promise, like any other.
 */
export function readJsonBody(request: IncomingMessage, mediaTypes: readonly string[]): Promise<JsonBody> {
  const refusal = mediaTypeRefusal(request, mediaTypes);
  if (refusal !== undefined) return Promise.reject(refusal);
  return readBodyBytes(request).then(parseJsonBody, (error: Error) => {
    throw bodyReadProblem(error);
  });
}

/** Why a body of this media type and charset is not read, if it is not. */
function mediaTypeRefusal(request: IncomingMessage, mediaTypes: readonly string[]): HttpProblem | undefined {
  const header = request.headers['content-type'];
  if (!header) {
    const length = request.headers['content-length'];
    if ((!length || ~~length === 0) && !request.headers['transfer-encoding']) return new HttpProblem('invalid_body', 'a JSON body is required');
    return new HttpProblem('unsupported_media_type', `Content-Type must be ${mediaTypes.join(' or ')}`);
  }
  let type: string;
  let charset: string | undefined;
  try {
    const parsed = parseContentType(header);
    type = parsed.type;
    charset = parsed.parameters.charset;
  } catch {
    return new HttpProblem('unsupported_media_type', `Content-Type ${JSON.stringify(header)} is not a valid media type`);
  }
  if (!mediaTypes.includes(type)) return new HttpProblem('unsupported_media_type', `Content-Type must be ${mediaTypes.join(' or ')}, got ${type}`);
  if (charset !== undefined && !['utf-8', 'utf8'].includes(charset.toLowerCase())) {
    return new HttpProblem('unsupported_media_type', `the only supported charset is utf-8, got ${charset}`);
  }
  return undefined;
}

/**
 * Decodes the bytes read as UTF-8, refusing (never replacing) an ill-formed sequence, and parses the
 * text as JSON. JSON text is UTF-8 (RFC 8259 §8.1), so bytes that are not are malformed JSON.
 */
function parseJsonBody(bytes: Buffer): JsonBody {
  const decoded = decodeUtf8Strictly(bytes);
  if ('invalidAt' in decoded) {
    const byte = bytes[decoded.invalidAt]!.toString(16).toUpperCase().padStart(2, '0');
    throw new HttpProblem('malformed_json', `the body is not valid UTF-8: the sequence at byte offset ${decoded.invalidAt} (starting 0x${byte}) is not a well-formed character`);
  }
  return { value: decoded.text === '' ? undefined : parseJson(decoded.text), raw: decoded.text };
}

// "__proto__" as JSON may write it, any of its characters escaped.
const PROTO_KEY = /"(?:_|\\u005[Ff]){2}(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff]){2}"/;

function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpProblem('malformed_json', `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (PROTO_KEY.test(text) && holdsProtoKey(value)) throw new HttpProblem('invalid_body', 'the body must not contain a "__proto__" key');
  const duplicate = duplicatedKey(text);
  if (duplicate !== undefined) {
    throw new HttpProblem('invalid_body', `the key ${JSON.stringify(duplicate)} appears twice in one object: JSON.parse would keep the last silently`);
  }
  return value;
}

/**
 * The first key written twice in one object of JSON text that JSON.parse accepted, compared as parsed
 * (`"a"` and `"\u0061"` are one key), or undefined. One pass with a stack, since nesting may be deep.
 */
export function duplicatedKey(text: string): string | undefined {
  const open: Array<Set<string> | undefined> = [];
  let index = 0;
  while (index < text.length) {
    const char = text.charCodeAt(index);
    if (char === QUOTE) {
      const start = index;
      let escaped = false;
      index++;
      while (text.charCodeAt(index) !== QUOTE) {
        if (text.charCodeAt(index) === BACKSLASH) {
          escaped = true;
          index++;
        }
        index++;
      }
      index++;
      const keys = open[open.length - 1];
      if (keys === undefined) continue;
      let after = index;
      while (after < text.length && JSON_WHITE_SPACE.has(text.charCodeAt(after))) after++;
      if (text.charCodeAt(after) !== COLON) continue;
      const key = escaped ? (JSON.parse(text.slice(start, index)) as string) : text.slice(start + 1, index - 1);
      if (keys.has(key)) return key;
      keys.add(key);
      index = after + 1;
      continue;
    }
    if (char === OPEN_BRACE) open.push(new Set());
    else if (char === OPEN_BRACKET) open.push(undefined);
    else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) open.pop();
    index++;
  }
  return undefined;
}

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const JSON_WHITE_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Whether any object in the value has an own "__proto__" key; walked without recursion, since nesting may be deep. */
function holdsProtoKey(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null) continue;
    if (Object.prototype.hasOwnProperty.call(next, '__proto__')) return true;
    for (const child of Object.values(next)) pending.push(child);
  }
  return false;
}

function bodyReadProblem(error: Error & { status?: number; type?: string }): HttpProblem {
  if (error.status === 413 || error.type === 'entity.too.large') return new HttpProblem('payload_too_large', `the request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB`);
  if (error.status === 415 || error.type === 'encoding.unsupported') return new HttpProblem('unsupported_media_type', error.message);
  return new HttpProblem('invalid_body', `the request body could not be read: ${error.message}`);
}

/**
 * The parsed body as a JSON object with only `allowed` fields, or a 400 that says what is wrong.
 * Also returns the raw text, for checks that need the number as written.
 */
export function readJsonObject({ value: body, raw }: JsonBody, what: string, allowed: readonly string[]): { body: Record<string, unknown>; raw: string } {
  if (raw.trim() === '') throw new HttpProblem('invalid_body', 'a JSON body is required');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpProblem('invalid_body', `the body must be a JSON object (${what}), got ${describe(body)}`);
  }
  const record = body as Record<string, unknown>;
  const unknownField = Object.keys(record).find((field) => !allowed.includes(field));
  if (unknownField !== undefined) {
    if (unknownField === 'id') throw new HttpProblem('invalid_body', 'id must not be sent: the service assigns it');
    throw new HttpProblem('invalid_body', `unknown field ${JSON.stringify(unknownField)}; ${what} has only ${allowed.join(', ')}`);
  }
  return { body: record, raw };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
