import type { RateLimitPolicy } from '../../config/config.ts';

export interface TakeResult {
  readonly allowed: boolean;
  /** Whole tokens left after this request. */
  readonly remaining: number;
  /** Seconds, rounded up, until the next token is added: when a refused client may try again. */
  readonly secondsToNextToken: number;
}

export interface TokenBuckets {
  /** Takes one token from `key`'s bucket when it has one. */
  take(key: string): TakeResult;
  readonly size: number;
}

// Past this many buckets, full ones are dropped: a full bucket is the same as no bucket. The next sweep
// waits until the map has doubled, so a crowd of clients still in use costs each new one O(1), not O(n).
const SWEEP_ABOVE = 10_000;
/** The most buckets kept: past it the oldest go, so many addresses cost bounded memory (each gone one starts full). */
export const MAX_TOKEN_BUCKETS = 100_000;

/** One token bucket per key, all with the same policy; `now` is a monotonic clock in milliseconds. */
export function createTokenBuckets(policy: RateLimitPolicy, now: () => number = () => performance.now()): TokenBuckets {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const perMs = policy.perSecond / 1000;
  let sweepAbove = SWEEP_ABOVE;

  const refill = (bucket: { tokens: number; at: number }, time: number) => {
    bucket.tokens = Math.min(policy.burst, bucket.tokens + (time - bucket.at) * perMs);
    bucket.at = time;
  };

  return {
    take(key) {
      const time = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= sweepAbove) {
          for (const [other, candidate] of buckets) {
            refill(candidate, time);
            if (candidate.tokens >= policy.burst) buckets.delete(other);
          }
          sweepAbove = Math.max(SWEEP_ABOVE, 2 * buckets.size);
        }
        // A Map keeps insertion order: the first key is the oldest bucket.
        if (buckets.size >= MAX_TOKEN_BUCKETS) buckets.delete(buckets.keys().next().value!);
        bucket = { tokens: policy.burst, at: time };
        buckets.set(key, bucket);
      }
      refill(bucket, time);
      const allowed = bucket.tokens >= 1;
      if (allowed) bucket.tokens -= 1;
      const whole = Math.floor(bucket.tokens);
      // After a take the bucket is never full, so a next token is always on its way.
      const secondsToNextToken = Math.max(1, Math.ceil((whole + 1 - bucket.tokens) / policy.perSecond));
      return { allowed, remaining: whole, secondsToNextToken };
    },
    get size() {
      return buckets.size;
    },
  };
}
