import type { KeyCheckOf } from './require-api-key.ts';
import { requireApiKey } from './require-api-key.ts';
import { allowCrossOrigin } from './cors.ts';
import { markRoute } from './deprecation.ts';
import type { Guard } from './guards.ts';
import { limitRate } from './rate-limit.ts';
import type { RateLimiter } from './rate-limit.ts';
import { requireHost } from './require-host.ts';

export interface ServiceGuardsOptions {
  readonly keyCheck: KeyCheckOf;
  readonly rateLimiter?: RateLimiter | undefined;
  /** Origins allowed by CORS (['*']: any); empty: no CORS guard at all. */
  readonly corsOrigins: readonly string[];
  /** The methods a path answers to: a preflight is answered only for a known path. */
  readonly methodsAllowedAt: (path: string) => readonly string[];
  /** Run after the service's own guards (a deployment's, or a test's). */
  readonly extraGuards?: readonly Guard[] | undefined;
}

/**
 * The checks before any route, in their order, declared here once: the Koa app runs them as one
 * middleware and each branch of the request pipeline runs them too, so no way of answering skips one.
 */
export function serviceGuards({ keyCheck, rateLimiter, corsOrigins, methodsAllowedAt, extraGuards = [] }: ServiceGuardsOptions): readonly Guard[] {
  return Object.freeze([
    // The route's own marks (a deprecated operation's headers) go on every answer, refusals too.
    markRoute,
    requireHost,
    // Without configured origins there is nothing to add: no guard at all on the hot path.
    ...(corsOrigins.length > 0 ? [allowCrossOrigin(corsOrigins, methodsAllowedAt)] : []),
    // The key before anything about the request itself: a bad key with a bad body is 401.
    requireApiKey(keyCheck),
    ...(rateLimiter ? [limitRate(rateLimiter)] : []),
    ...extraGuards,
  ]);
}
