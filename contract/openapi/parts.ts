import { STATUS_CODES } from 'node:http';
import { ERROR_STATUS } from '../error-codes.ts';
import type { ErrorCode } from '../error-codes.ts';

/** What every part of the OpenAPI document builds with: references, the error answers, the experimental operations. */
export type Json = Record<string, unknown>;

export function schemaRef(name: string): string {
  return `#/components/schemas/${name}`;
}

export const json = (schemaName: string) => ({ 'application/json': { schema: { $ref: schemaRef(schemaName) } } });
export const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
export const parameter = (name: string) => ({ $ref: `#/components/parameters/${name}` });

// Codes any pet operation can answer: Node's parser, the key check and the rate limit (when it is on)
// come before the operation itself.
export const EVERY_OPERATION: readonly ErrorCode[] = ['invalid_header', 'unauthorized', 'rate_limited', 'request_timeout', 'headers_too_large', 'internal', 'unavailable'];
export const BODY_CODES: readonly ErrorCode[] = ['invalid_body', 'malformed_json', 'unsupported_media_type', 'payload_too_large'];

/**
 * The error answers of an operation, one per status, each naming exactly the codes it may carry
 * (a code always comes with one status: ERROR_STATUS).
 */
export function errorResponses(codes: readonly ErrorCode[], extraHeaders: Json = {}): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...EVERY_OPERATION, ...codes]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, statusCodes]) => {
    // 408 and 431 come from Node's parser, before any route: they carry no operation's headers.
    const headers: Json = { 'X-Request-Id': header('XRequestId'), ...(status === 408 || status === 431 ? {} : extraHeaders) };
    if (status === 401) headers['WWW-Authenticate'] = header('WWWAuthenticate');
    if (status === 503) headers['Retry-After'] = header('RetryAfter');
    // The rate limit is counted after the key check: every answer past it carries the quota, a 429 also Retry-After.
    if (status !== 401 && status !== 408 && status !== 431) Object.assign(headers, RATE_LIMIT_HEADERS);
    if (status === 429) headers['Retry-After'] = header('RetryAfter');
    return [String(status), {
      description: `${STATUS_CODES[status]}: ${statusCodes.join(', ')}`,
      headers,
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: schemaRef('Error') },
              { type: 'object', properties: { code: { type: 'string', enum: statusCodes }, status: { type: 'integer', const: status } } },
            ],
          },
        },
      },
    }];
  }));
}

export const RATE_LIMIT_HEADERS = { 'RateLimit-Policy': header('RateLimitPolicy'), RateLimit: header('RateLimit') };
export const DEPRECATION_HEADERS = { Deprecation: header('Deprecation'), Sunset: header('Sunset'), Link: header('SuccessorLink') };

export const withRequestId = { 'X-Request-Id': header('XRequestId') };

/** The experimental operations of one tag, each told by its summary, description, success answer, error codes and what else it has (a body). */
export function experimentalOperations(tag: string, preface: string) {
  return (operationId: string, summary: string, description: string, success: Json, codes: readonly ErrorCode[], extra: Json = {}): Json => ({
    operationId,
    tags: [tag],
    summary: `${summary} (experimental)`,
    description: `${preface} ${description}`,
    'x-stability': 'experimental',
    parameters: [parameter('XRequestId')],
    ...extra,
    responses: { ...success, ...errorResponses(codes) },
  });
}

export const answer = (description: string, schemaName?: string, headers: Json = {}) => ({
  description, headers: { ...withRequestId, ...headers, ...RATE_LIMIT_HEADERS }, ...(schemaName ? { content: json(schemaName) } : {}),
});
export const body = (schemaName: string) => ({ requestBody: { required: true, content: json(schemaName) } });
