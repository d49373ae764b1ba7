import type { Guard } from './guards.ts';
import { addAnswerHeader } from '../pipeline/request-state.ts';
import { MIN_POSITION_HEADER, POSITION_HEADER } from '../pipeline/read-positions.ts';

/** Headers a browser script may read from our answers. */
export const EXPOSED_HEADERS = ['Location', 'ETag', 'Link', 'Deprecation', 'Sunset', 'X-Request-Id', 'Retry-After', 'WWW-Authenticate', 'RateLimit', 'RateLimit-Policy', POSITION_HEADER];
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key', 'X-Request-Id', MIN_POSITION_HEADER];
const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PATCH'];
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * CORS for the configured origins (['*']: any), as a guard, so that every way of answering adds the same
 * headers (written here rather than with @koa/cors, which needs a Koa context). Answers vary by Origin.
 * A preflight to a known path from an allowed origin is answered 204 here, before any key check; one to an
 * unknown path, or from an origin not allowed, goes on to the usual 404/405.
 */
export function allowCrossOrigin(origins: readonly string[], methodsAllowedAt: (path: string) => readonly string[]): Guard {
  const anyOrigin = origins.includes('*');
  const exposed = EXPOSED_HEADERS.join(',');
  return (request, response, state) => {
    addAnswerHeader(state, response, 'Vary', 'Origin');
    const origin = request.headers.origin;
    const allowed = anyOrigin ? '*' : origin !== undefined && origins.includes(origin) ? origin : undefined;
    if (allowed === undefined) return undefined;
    if (request.method !== 'OPTIONS') {
      addAnswerHeader(state, response, 'Access-Control-Allow-Origin', allowed);
      addAnswerHeader(state, response, 'Access-Control-Expose-Headers', exposed);
      return undefined;
    }
    if (request.headers['access-control-request-method'] === undefined || methodsAllowedAt(request.url!.split('?', 1)[0]!).length === 0) return undefined;
    addAnswerHeader(state, response, 'Access-Control-Allow-Origin', allowed);
    addAnswerHeader(state, response, 'Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_S));
    addAnswerHeader(state, response, 'Access-Control-Allow-Methods', ALLOWED_METHODS.join(','));
    addAnswerHeader(state, response, 'Access-Control-Allow-Headers', ALLOWED_HEADERS.join(','));
    return { status: 204 };
  };
}
