import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenBuckets, MAX_TOKEN_BUCKETS } from '../../adapters/http/guards/token-bucket.ts';

describe('token buckets', () => {
  function clock() {
    let time = 0;
    return { now: () => time, advance: (ms: number) => (time += ms) };
  }

  it('lets a full bucket serve `burst` requests at once, then refuses', () => {
    const buckets = createTokenBuckets({ perSecond: 2, burst: 3 }, clock().now);
    assert.deepEqual([1, 2, 3, 4].map(() => buckets.take('k').allowed), [true, true, true, false]);
  });

  it('counts down the whole tokens left', () => {
    const buckets = createTokenBuckets({ perSecond: 2, burst: 3 }, clock().now);
    assert.deepEqual([1, 2, 3, 4].map(() => buckets.take('k').remaining), [2, 1, 0, 0]);
  });

  it('refills at the rate, never past the burst', () => {
    const time = clock();
    const buckets = createTokenBuckets({ perSecond: 2, burst: 3 }, time.now);
    for (let index = 0; index < 3; index++) buckets.take('k');
    time.advance(500);
    assert.deepEqual(buckets.take('k'), { allowed: true, remaining: 0, secondsToNextToken: 1 });
    assert.equal(buckets.take('k').allowed, false);
    time.advance(60_000);
    assert.equal(buckets.take('k').remaining, 2);
  });

  it('says how many seconds until the next token, rounded up', () => {
    const time = clock();
    const buckets = createTokenBuckets({ perSecond: 0.25, burst: 1 }, time.now);
    assert.deepEqual(buckets.take('k'), { allowed: true, remaining: 0, secondsToNextToken: 4 });
    time.advance(1500);
    assert.deepEqual(buckets.take('k'), { allowed: false, remaining: 0, secondsToNextToken: 3 });
    time.advance(2500);
    assert.equal(buckets.take('k').allowed, true);
  });

  it('keeps a bucket per key', () => {
    const buckets = createTokenBuckets({ perSecond: 1, burst: 1 }, clock().now);
    assert.equal(buckets.take('a').allowed, true);
    assert.equal(buckets.take('a').allowed, false);
    assert.equal(buckets.take('b').allowed, true);
  });

  it('drops refilled buckets once there are many, keeping those still in use', () => {
    const time = clock();
    const buckets = createTokenBuckets({ perSecond: 1, burst: 2 }, time.now);
    for (let index = 0; index < 10_000; index++) buckets.take(`idle-${index}`);
    time.advance(1000);
    buckets.take('busy');
    buckets.take('busy');
    time.advance(10);
    assert.equal(buckets.take('new').allowed, true);
    assert.equal(buckets.size, 2);
    assert.equal(buckets.take('busy').allowed, false);
  });

  it('keeps at most MAX_TOKEN_BUCKETS buckets however many clients are still in use, dropping the oldest', () => {
    const buckets = createTokenBuckets({ perSecond: 1, burst: 2 }, clock().now);
    for (let index = 0; index < MAX_TOKEN_BUCKETS + 5_000; index++) buckets.take(`client-${index}`);
    assert.equal(buckets.size, MAX_TOKEN_BUCKETS);
    assert.equal(buckets.take('client-0').remaining, 1, 'the oldest bucket went, so it starts full again');
    buckets.take(`client-${MAX_TOKEN_BUCKETS + 4_999}`);
    assert.equal(buckets.take(`client-${MAX_TOKEN_BUCKETS + 4_999}`).allowed, false, 'the newest is still kept');
  });
});
