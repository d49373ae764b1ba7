import type { Context, Next } from 'koa';
import { GET_PET_DEPRECATION, GET_PET_SUNSET } from '../../contract/deprecations.ts';

/** Marks every answer of a deprecated operation, errors included, and points at its successor. */
export function markDeprecated(successorPath: string, publicBaseUrl: () => string) {
  return async function markDeprecatedMiddleware(ctx: Context, next: Next): Promise<void> {
    ctx.set('Deprecation', GET_PET_DEPRECATION);
    ctx.set('Sunset', GET_PET_SUNSET);
    ctx.set('Link', `<${publicBaseUrl()}${successorPath}>; rel="successor-version"`);
    await next();
  };
}
