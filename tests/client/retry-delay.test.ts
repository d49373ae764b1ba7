import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RETRY_POLICY, retryDelay } from '../../client/retry.ts';

describe('retryDelay: bounded exponential back-off with full jitter', () => {
  const policy = { attempts: 6, initialDelayMs: 100, maxDelayMs: 1_000 };

  it('waits up to a cap that doubles with each retry: 100, 200, 400, 800 ms', () => {
    assert.deepEqual([0, 1, 2, 3].map((retry) => retryDelay(retry, policy, undefined, () => 1)), [100, 200, 400, 800]);
  });

  it('never waits longer than maxDelayMs, however many retries', () => {
    assert.deepEqual([4, 10, 60].map((retry) => retryDelay(retry, policy, undefined, () => 1)), [1_000, 1_000, 1_000]);
  });

  it('draws the wait at random from zero up to the cap', () => {
    assert.equal(retryDelay(2, policy, undefined, () => 0), 0);
    assert.equal(retryDelay(2, policy, undefined, () => 0.25), 100);
  });

  it('waits at least the Retry-After the service asked for', () => {
    assert.equal(retryDelay(0, policy, 700, () => 0.5), 700);
  });

  it('caps a Retry-After at maxDelayMs too', () => {
    assert.equal(retryDelay(0, policy, 30_000, () => 0.5), 1_000);
  });

  it('by default waits at most 2 s and tries 4 times', () => {
    assert.deepEqual(DEFAULT_RETRY_POLICY, { attempts: 4, initialDelayMs: 100, maxDelayMs: 2_000 });
    assert.ok(Object.isFrozen(DEFAULT_RETRY_POLICY));
  });
});
