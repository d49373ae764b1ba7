import type { Context, Next } from 'koa';

/** Times every request by method, route template (never the raw path: ids would make endless series) and status. */
export function measureRequests(observe: (method: string, route: string, status: number, seconds: number) => void) {
  return async function measureRequestsMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      observe(ctx.method, ctx._matchedRoute?.toString() ?? 'unmatched', ctx.status, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
