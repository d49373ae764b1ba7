import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { parse as parseContentType } from 'content-type';
import { CATEGORY_ID_MAX } from '../../domain/index.ts';
import type { NewPet } from '../../application/index.ts';
import { HttpProblem } from './errors.ts';
import { exactInteger, topLevelNumberText } from './exact-json-integer.ts';
import { NewPetCheck, NewPetSchema } from './schemas.ts';

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
  onError(error) {
    throw bodyReadProblem(error);
  },
});

/** Refuses bodies that are not JSON in UTF-8 before reading them (koa-body alone would take text/plain). */
export function requireJsonBody(mediaTypes: readonly string[]) {
  return async function requireJsonBodyMiddleware(ctx: Context, next: Next): Promise<void> {
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
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
      throw new HttpProblem('unsupported_media_type', `the only supported charset is utf-8, got ${charset}`);
    }
    await parseJson(ctx, next);
  };
}

function bodyReadProblem(error: Error & { status?: number; type?: string }): HttpProblem {
  if (error.status === 413 || error.type === 'entity.too.large') return new HttpProblem('payload_too_large', `the request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB`);
  if (error.status === 415 || error.type === 'encoding.unsupported') return new HttpProblem('unsupported_media_type', error.message);
  if (/prototype property/.test(error.message)) return new HttpProblem('invalid_body', 'the body must not contain a "__proto__" key');
  if (error instanceof SyntaxError) return new HttpProblem('malformed_json', `the body is not valid JSON: ${error.message}`);
  return new HttpProblem('invalid_body', `the request body could not be read: ${error.message}`);
}

const FIELDS = Object.keys(NewPetSchema.properties);

/** The parsed body as a NewPet, with a 400 that names the field for anything else. */
export function readNewPet(ctx: Context): NewPet {
  const body: unknown = ctx.request.body;
  const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
  if (raw.trim() === '') throw new HttpProblem('invalid_body', 'a JSON body is required');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpProblem('invalid_body', `the body must be a JSON object (a NewPet), got ${describe(body)}`);
  }
  const record = body as Record<string, unknown>;
  if (Object.hasOwn(record, 'id')) throw new HttpProblem('invalid_body', 'id must not be sent: the service assigns it');
  const unknownField = Object.keys(record).find((field) => !FIELDS.includes(field));
  if (unknownField !== undefined) {
    throw new HttpProblem('invalid_body', `unknown field ${JSON.stringify(unknownField)}; a NewPet has ${FIELDS.join(', ')}`);
  }
  for (const field of ['name', 'categoryId'] as const) {
    if (!Object.hasOwn(record, field)) throw new HttpProblem('invalid_body', `${field} is required`);
  }
  if (typeof record.categoryId === 'number') assertExactCategoryId(raw);
  if (!NewPetCheck.Check(record)) {
    const first = NewPetCheck.Errors(record).First()!;
    throw new HttpProblem('invalid_body', `${first.path.slice(1) || 'body'}: ${first.message}`);
  }
  return record;
}

function assertExactCategoryId(raw: string): void {
  const text = topLevelNumberText(raw, 'categoryId');
  const value = text === undefined ? undefined : exactInteger(text);
  if (value === undefined || value < 1n || value > BigInt(CATEGORY_ID_MAX)) {
    throw new HttpProblem('invalid_body', `categoryId must be an integer from 1 to ${CATEGORY_ID_MAX}, got ${text}`);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
