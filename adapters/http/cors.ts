import cors from '@koa/cors';
import type { Context, Next } from 'koa';
import { MIN_POSITION_HEADER, POSITION_HEADER } from './read-positions.ts';

/** Headers a browser script may read from our answers. */
export const EXPOSED_HEADERS = ['Location', 'ETag', 'Link', 'Deprecation', 'Sunset', 'X-Request-Id', 'Retry-After', 'WWW-Authenticate', 'RateLimit', 'RateLimit-Policy', POSITION_HEADER];
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key', 'X-Request-Id', MIN_POSITION_HEADER];

/**
 * CORS for the configured origins (['*']: any). Preflights are answered here, before any key check.
 * A preflight to an unknown path, or from an origin not allowed, goes on to the usual 404/405.
 */
export function allowCrossOrigin(origins: readonly string[], methodsAllowedAt: (path: string) => readonly string[]) {
  const anyOrigin = origins.includes('*');
  const handle = cors({
    origin: (ctx) => {
      if (anyOrigin) return '*';
      const origin = ctx.get('origin');
      return origins.includes(origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'PATCH'],
    allowHeaders: ALLOWED_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  return async function allowCrossOriginMiddleware(ctx: Context, next: Next): Promise<void> {
    if (origins.length === 0 || (ctx.method === 'OPTIONS' && methodsAllowedAt(ctx.path).length === 0)) return next();
    return handle(ctx, next);
  };
}
