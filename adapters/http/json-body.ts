import type { Context, Next } from 'koa';
import coBody from 'co-body';
import { parse as parseContentType } from 'content-type';
import { HttpProblem } from './errors.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;

interface ReadBody {
  readonly parsed: unknown;
  /** The text as sent, for checks that need a number as written. */
  readonly raw: string;
}

/** The body each request read, for `readJsonObject`. */
const readBodies = new WeakMap<Context['request'], ReadBody>();

/**
 * Reads and parses the body with co-body (the length limit, Content-Encoding, UTF-8 with U+FFFD for
 * bad bytes, `__proto__` keys refused). Not strict: strict mode gives malformed JSON and a JSON array
 * the same error; we tell them apart.
 */
async function parseJson(ctx: Context, next: Next): Promise<void> {
  let read: ReadBody;
  try {
    read = await coBody.json(ctx, { encoding: 'utf-8', limit: BODY_LIMIT_BYTES, strict: false, returnRawBody: true });
  } catch (error) {
    throw bodyReadProblem(error instanceof Error ? error : new Error(String(error)));
  }
  readBodies.set(ctx.request, read);
  return next();
}

/** Refuses bodies that are not JSON in UTF-8 before reading them. */
export function requireJsonBody(mediaTypes: readonly string[]) {
  return function requireJsonBodyMiddleware(ctx: Context, next: Next): Promise<void> {
    const header = ctx.get('content-type');
    if (!header) {
      if (!ctx.request.length && !ctx.get('transfer-encoding')) throw new HttpProblem('invalid_body', 'a JSON body is required');
      throw new HttpProblem('unsupported_media_type', `Content-Type must be ${mediaTypes.join(' or ')}`);
    }
    let type: string;
    let charset: string | undefined;
    try {
      const parsed = parseContentType(header);
      type = parsed.type;
      charset = parsed.parameters.charset;
    } catch {
      throw new HttpProblem('unsupported_media_type', `Content-Type ${JSON.stringify(header)} is not a valid media type`);
    }
    if (!mediaTypes.includes(type)) throw new HttpProblem('unsupported_media_type', `Content-Type must be ${mediaTypes.join(' or ')}, got ${type}`);
    if (charset !== undefined && !['utf-8', 'utf8'].includes(charset.toLowerCase())) {
      throw new HttpProblem('unsupported_media_type', `the only supported charset is utf-8, got ${charset}`);
    }
    return parseJson(ctx, next);
  };
}

function bodyReadProblem(error: Error & { status?: number; type?: string }): HttpProblem {
  if (error.status === 413 || error.type === 'entity.too.large') return new HttpProblem('payload_too_large', `the request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB`);
  if (error.status === 415 || error.type === 'encoding.unsupported') return new HttpProblem('unsupported_media_type', error.message);
  if (/prototype property/.test(error.message)) return new HttpProblem('invalid_body', 'the body must not contain a "__proto__" key');
  if (error instanceof SyntaxError) return new HttpProblem('malformed_json', `the body is not valid JSON: ${error.message}`);
  return new HttpProblem('invalid_body', `the request body could not be read: ${error.message}`);
}

/**
 * The parsed body as a JSON object with only `allowed` fields, or a 400 that says what is wrong.
 * Also returns the raw text, for checks that need the number as written.
 */
export function readJsonObject(ctx: Context, what: string, allowed: readonly string[]): { body: Record<string, unknown>; raw: string } {
  const read = readBodies.get(ctx.request);
  const body = read?.parsed;
  const raw = read?.raw ?? '';
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
