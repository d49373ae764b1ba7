import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { parse as parseContentType } from 'content-type';
import { HttpProblem } from './errors.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;

const parseJson = koaBody({
  json: true,
  jsonStrict: false, // strict mode gives malformed JSON and a JSON array the same error; we tell them apart
  jsonLimit: BODY_LIMIT_BYTES,
  includeUnparsed: true,
  text: false,
  urlencoded: false,
  multipart: false,
  encoding: 'utf-8',
  jsonTypes: ['application/json', 'application/merge-patch+json'],
  onError(error) {
    throw bodyReadProblem(error);
  },
});

/** Refuses bodies that are not JSON in UTF-8 before reading them (koa-body alone would take text/plain). */
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
  const body: unknown = ctx.request.body;
  const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
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
