import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_API_KEY, readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** PETSTORE_RATE_LIMIT: a token bucket per API key with the draft-ietf-httpapi-ratelimit-headers-11 fields. */

const OTHER_KEY = 'other-key-0123456789abcdef';

describe('rate limiting per API key', () => {
  let api: TestService;

  before(async () => {
    // One request per 100 s refills nothing during the test: every count below is exact.
    api = await startTestService({ PETSTORE_API_KEYS: `${TEST_API_KEY},${OTHER_KEY}`, PETSTORE_RATE_LIMIT: '0.01,3' });
  });
  after(async () => {
    await api.stop();
  });

  it('serves `burst` requests with RateLimit-Policy and a falling RateLimit, then answers 429 rate_limited', async () => {
    const answers = [];
    for (let index = 0; index < 4; index++) {
      const response = await api.request('/v1/pets');
      answers.push({ status: response.status, policy: response.headers.get('ratelimit-policy'), limit: response.headers.get('ratelimit') });
      if (index < 3) await response.body?.cancel();
      else {
        assert.equal((await readError(response)).code, 'rate_limited');
        assert.equal(response.headers.get('retry-after'), '100');
      }
    }
    assert.deepEqual(answers, [
      { status: 200, policy: '"per-key";q=3;w=300', limit: '"per-key";r=2;t=100' },
      { status: 200, policy: '"per-key";q=3;w=300', limit: '"per-key";r=1;t=100' },
      { status: 200, policy: '"per-key";q=3;w=300', limit: '"per-key";r=0;t=100' },
      { status: 429, policy: '"per-key";q=3;w=300', limit: '"per-key";r=0;t=100' },
    ]);
  });

  it('refuses a create past the limit without storing it', async () => {
    const response = await api.createPet({ name: 'Too many', categoryId: 1 });
    assert.equal(response.status, 429);
    assert.equal((await readError(response)).code, 'rate_limited');
    const listed = await api.request('/v1/pets?limit=100', { key: OTHER_KEY }).then((listing) => listing.json() as Promise<Array<{ name: string }>>);
    assert.ok(!listed.some((pet) => pet.name === 'Too many'));
  });

  it('keeps a separate bucket for another key', async () => {
    const response = await api.request('/v1/pets', { key: OTHER_KEY });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('ratelimit'), '"per-key";r=1;t=100');
    await response.body?.cancel();
  });

  it('checks the key first: a request without a valid key is 401 and counts against nobody', async () => {
    const response = await api.request('/v1/pets', { key: 'not-a-key-0123456789abcdef' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('ratelimit'), null);
    await response.body?.cancel();
  });
});

describe('rate limiting by default', () => {
  it('is off: no limit and no RateLimit fields', async () => {
    const api = await startTestService();
    try {
      for (let index = 0; index < 30; index++) {
        const response = await api.request('/v1/pets');
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('ratelimit'), null);
        assert.equal(response.headers.get('ratelimit-policy'), null);
        await response.body?.cancel();
      }
    } finally {
      await api.stop();
    }
  });
});
