import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWaitingClaims } from '../../adapters/http/routes/waiting-claims.ts';
import { HttpProblem } from '../../adapters/http/pipeline/errors.ts';

const refusal = (work: () => unknown) => {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof HttpProblem);
    return { status: error.status, code: error.code, retryAfter: error.headers['Retry-After'] };
  }
  assert.fail('admitted');
};

describe('the waiting claims\' bounds', () => {
  it('a key past its share is refused with 429 and Retry-After, whatever address it claims from', () => {
    const claims = createWaitingClaims({ perKey: 2, perClient: 10 });
    claims.admit('a', 'key');
    claims.admit('b', 'key');
    assert.deepEqual(refusal(() => claims.admit('c', 'key')), { status: 429, code: 'rate_limited', retryAfter: '5' });
    claims.admit('c', 'other-key');
  });

  it('an address past its share is refused with 429, whatever key it claims with; a claim that ends frees its slot at once', () => {
    const claims = createWaitingClaims({ perKey: 10, perClient: 2 });
    const first = claims.admit('a', 'one');
    claims.admit('a', 'two');
    assert.equal(refusal(() => claims.admit('a', 'three')).status, 429);
    claims.admit('b', 'three');
    first.done();
    first.done();
    claims.admit('a', 'three');
    assert.equal(claims.waiting, 3);
  });

  it('past the claims the instance lets wait in all, one more is refused with 503 and Retry-After, whatever its key and address', () => {
    const claims = createWaitingClaims({ perKey: 10, perClient: 10, inAll: 3 });
    const first = claims.admit('a', 'one');
    claims.admit('b', 'two');
    claims.admit('c', 'three');
    assert.deepEqual(refusal(() => claims.admit('d', 'four')), { status: 503, code: 'unavailable', retryAfter: '5' });
    first.done();
    claims.admit('d', 'four');
    assert.equal(claims.waiting, 3);
  });

  it('a revoked key\'s claims are stopped and marked revoked, others go on; the service\'s stop ends all and refuses new ones with 503', () => {
    const claims = createWaitingClaims({ perKey: 10, perClient: 10 });
    const revoked = claims.admit('a', 'gone');
    const kept = claims.admit('a', 'kept');
    claims.keyRevoked('gone');
    assert.deepEqual([revoked.signal.aborted, revoked.revoked, kept.signal.aborted, kept.revoked], [true, true, false, false]);
    claims.close();
    assert.deepEqual([kept.signal.aborted, kept.revoked], [true, false]);
    assert.equal(refusal(() => claims.admit('a', 'kept')).status, 503);
  });
});
