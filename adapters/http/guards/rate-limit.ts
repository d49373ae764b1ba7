import type { IncomingMessage } from 'node:http';
import type { Guard } from './guards.ts';
import type { RateLimitPolicy } from '../../config/config.ts';
import { clientAddressKey } from './client-address.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import { createTokenBuckets } from './token-bucket.ts';
import type { RateDecision, RequestState } from '../pipeline/request-state.ts';
import { addAnswerHeader } from '../pipeline/request-state.ts';

/** The policy's name in the RateLimit-Policy and RateLimit fields. */
export const RATE_LIMIT_POLICY_NAME = 'per-key';

/** A token bucket per API key. A refused request takes no token, so asking again gives the same refusal. */
export interface RateLimiter {
  readonly policy: RateLimitPolicy;
  take(apiKeyId: string): RateDecision;
}

/**
 * Every answer carries the fields of draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy`
 * (q: the burst; w: the seconds in which the rate refills it) and `RateLimit` (r: requests left now;
 * t: seconds until the next one is added).
 */
export function createRateLimiter(policy: RateLimitPolicy, now?: () => number): RateLimiter {
  const buckets = createTokenBuckets(policy, now);
  const policyField = `"${RATE_LIMIT_POLICY_NAME}";q=${policy.burst};w=${Math.max(1, Math.ceil(policy.burst / policy.perSecond))}`;
  return {
    policy,
    take(apiKeyId) {
      const result = buckets.take(apiKeyId);
      return {
        allowed: result.allowed,
        headers: { 'RateLimit-Policy': policyField, RateLimit: `"${RATE_LIMIT_POLICY_NAME}";r=${result.remaining};t=${result.secondsToNextToken}` },
        secondsToNextToken: result.secondsToNextToken,
      };
    },
  };
}

/** The request's decision: a token taken at most once per request, whoever asks first. */
export function decideRate(limiter: RateLimiter, state: RequestState, apiKeyId: string): RateDecision {
  return (state.rate ??= limiter.take(apiKeyId));
}

/** After the key guard, on a keyed route: a refused request is 429 `rate_limited` with `Retry-After` equal to t. */
export function limitRate(limiter: RateLimiter): Guard {
  const { policy } = limiter;
  return (_request, response, state, route) => {
    if (route?.keyed !== true || state.keyId === null) return undefined;
    const decision = decideRate(limiter, state, state.keyId);
    if (!decision.allowed) {
      return new HttpProblem('rate_limited', `too many requests for this API key: at most ${policy.burst} at once and ${policy.perSecond} a second`, {
        ...decision.headers,
        'Retry-After': String(decision.secondsToNextToken),
      });
    }
    for (const name in decision.headers) addAnswerHeader(state, response, name, decision.headers[name]!);
    return undefined;
  };
}

/**
 * Requests without a valid key, counted per client address (an IPv6 client by its /64; a token bucket each): past the burst,
 * such a request is answered 429 with `Retry-After` instead of 401. Requests with a valid key are never counted.
 */
export function limitKeyFailures(policy: RateLimitPolicy, now?: () => number): (request: IncomingMessage, refusal: HttpProblem) => HttpProblem {
  const buckets = createTokenBuckets(policy, now);
  return (request, refusal) => {
    const taken = buckets.take(clientAddressKey(request.socket?.remoteAddress ?? ''));
    if (taken.allowed) return refusal;
    return new HttpProblem(
      'rate_limited',
      `too many requests without a valid API key from this address: at most ${policy.burst} at once and ${policy.perSecond} a second`,
      { 'Retry-After': String(taken.secondsToNextToken) },
    );
  };
}
