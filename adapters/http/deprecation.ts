import type { Context, Next } from 'koa';

/** GET /pets/{petId} has been deprecated since interface 1.0.0 reached us (2026-11-21, RFC 9745 form). */
export const GET_PET_DEPRECATION = '@1795219200';
/** Removed on 5 December 2030 (RFC 8594). */
export const GET_PET_SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';

/** Marks every answer of a deprecated operation, errors included, and points at its successor. */
export function markDeprecated(successorPath: string, publicBaseUrl: () => string) {
  return async function markDeprecatedMiddleware(ctx: Context, next: Next): Promise<void> {
    ctx.set('Deprecation', GET_PET_DEPRECATION);
    ctx.set('Sunset', GET_PET_SUNSET);
    ctx.set('Link', `<${publicBaseUrl()}${successorPath}>; rel="successor-version"`);
    await next();
  };
}
