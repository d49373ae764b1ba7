import type { Context, Next } from 'koa';
import type { RateLimitPolicy } from '../config.ts';
import { HttpProblem } from './errors.ts';
import { createTokenBuckets } from './token-bucket.ts';

/** The policy's name in the RateLimit-Policy and RateLimit fields. */
export const RATE_LIMIT_POLICY_NAME = 'per-key';

/**
 * A token bucket per API key, after the key check. Every answer carries the fields of
 * draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy` (q: the burst; w: the seconds in which
 * the rate refills it) and `RateLimit` (r: requests left now; t: seconds until the next one is added).
 * A refused request is 429 `rate_limited` with `Retry-After` equal to t.
 */
export function limitRate(policy: RateLimitPolicy, now?: () => number) {
  const buckets = createTokenBuckets(policy, now);
  const policyField = `"${RATE_LIMIT_POLICY_NAME}";q=${policy.burst};w=${Math.max(1, Math.ceil(policy.burst / policy.perSecond))}`;
  return async function limitRateMiddleware(ctx: Context, next: Next): Promise<void> {
    const result = buckets.take(String(ctx.state.apiKeyId));
    const headers = {
      'RateLimit-Policy': policyField,
      RateLimit: `"${RATE_LIMIT_POLICY_NAME}";r=${result.remaining};t=${result.secondsToNextToken}`,
    };
    if (!result.allowed) {
      throw new HttpProblem('rate_limited', `too many requests for this API key: at most ${policy.burst} at once and ${policy.perSecond} a second`, {
        ...headers,
        'Retry-After': String(result.secondsToNextToken),
      });
    }
    ctx.set(headers);
    await next();
  };
}
