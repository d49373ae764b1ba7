import { PetStoreAbortError, PetStoreError, PetStoreNetworkError, PetStoreTimeoutError } from './errors.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included; 1 turns retrying off. */
  readonly attempts: number;
  /** The longest first wait; the longest wait doubles with each retry. */
  readonly initialDelayMs: number;
  /** No wait is longer than this, a Retry-After included, so a call's length stays bounded. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ attempts: 4, initialDelayMs: 100, maxDelayMs: 2_000 });

/**
 * The wait before retry number `retry` (0 for the first): "full jitter", a random time up to a cap
 * that doubles each time, so clients that failed together do not come back together. A Retry-After
 * from the service lengthens the wait; `maxDelayMs` bounds both.
 */
export function retryDelay(retry: number, policy: RetryPolicy, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** retry);
  return Math.min(policy.maxDelayMs, Math.max(random() * cap, retryAfterMs ?? 0));
}

/** Failures worth another try: no answer, no answer in time, or 503 (the service could not serve it now). */
export function isRetryable(error: unknown): boolean {
  return error instanceof PetStoreNetworkError || error instanceof PetStoreTimeoutError || (error instanceof PetStoreError && error.status === 503);
}

/** Runs `attempt` until it succeeds, fails for good, or the policy's attempts are spent; throws the last failure. */
export async function withRetries<T>(policy: RetryPolicy, signal: AbortSignal | undefined, attempt: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      if (retry + 1 >= policy.attempts || !isRetryable(error)) throw error;
      const retryAfterMs = error instanceof PetStoreError ? error.retryAfterMs : undefined;
      await wait(retryDelay(retry, policy, retryAfterMs), signal);
    }
  }
}

/** Resolves after `ms`, or rejects with PetStoreAbortError as soon as `signal` aborts. */
export function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new PetStoreAbortError('the call was aborted', signal.reason));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new PetStoreAbortError('the call was aborted while waiting to retry', signal!.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
