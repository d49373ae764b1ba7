import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';

// A client's own request id is kept when it is short visible ASCII; anything else is replaced.
const ACCEPTABLE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** Gives each request an id (the client's X-Request-Id or a new one), echoes it, and logs one line when done. */
export function logRequests(logger: Logger) {
  return async function logRequestsMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const offered = ctx.get('x-request-id');
    const requestId = ACCEPTABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      logger.info({
        requestId,
        method: ctx.method,
        route: ctx._matchedRoute ?? null,
        path: ctx.path,
        status: ctx.status,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        apiKeyId: ctx.state.apiKeyId ?? null,
      }, 'request');
    }
  };
}
