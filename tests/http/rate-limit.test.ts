import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
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
    const began = performance.now();
    let retryAfter = '';
    for (let index = 0; index < 4; index++) {
      const response = await api.request('/v1/pets');
      answers.push({ status: response.status, policy: response.headers.get('ratelimit-policy'), limit: response.headers.get('ratelimit') });
      if (index < 3) await response.body?.cancel();
      else {
        assert.equal((await readError(response)).code, 'rate_limited');
        retryAfter = response.headers.get('retry-after')!;
      }
    }
    // The next token is 100 s away from the first request, less the whole seconds a slow machine took since.
    const waits = new Set(Array.from({ length: Math.ceil((performance.now() - began) / 1000) + 1 }, (_, second) => String(100 - second)));
    assert.ok(waits.has(retryAfter), `Retry-After ${retryAfter}, expected one of ${[...waits]}`);
    const t = (limit: string | null) => limit?.replace(/;t=(\d+)$/, (_, seconds: string) => (waits.has(seconds) ? ';t=<next token>' : `;t=${seconds}`));
    assert.deepEqual(answers.map((answer) => ({ ...answer, limit: t(answer.limit) })), [
      { status: 200, policy: '"per-key";q=3;w=300', limit: '"per-key";r=2;t=<next token>' },
      { status: 200, policy: '"per-key";q=3;w=300', limit: '"per-key";r=1;t=<next token>' },
      { status: 200, policy: '"per-key";q=3;w=300', limit: '"per-key";r=0;t=<next token>' },
      { status: 429, policy: '"per-key";q=3;w=300', limit: '"per-key";r=0;t=<next token>' },
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

/** GET /v1/pets from the client address `from` (127.0.0.x: each its own client), with `key`. */
function listFrom(api: TestService, from: string, key: string): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port: api.service.port, path: '/v1/pets?limit=1', localAddress: from, headers: { authorization: `Bearer ${key}` } }, (incoming) => {
      let body = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (body += chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode!, retryAfter: incoming.headers['retry-after'], body }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('requests without a valid key, per client address (PETSTORE_KEY_FAILURE_LIMIT)', () => {
  const WRONG = 'wrong-key-0123456789abcdef';

  it('answers 429 with Retry-After past the burst of failures, only to that address, and never to a valid key', async () => {
    // One failure per 100 s refills nothing during the test.
    const api = await startTestService({ PETSTORE_KEY_FAILURE_LIMIT: '0.01,3' });
    try {
      const statuses = [];
      for (let index = 0; index < 3; index++) statuses.push((await listFrom(api, '127.0.0.2', WRONG)).status);
      assert.deepEqual(statuses, [401, 401, 401]);
      const refused = await listFrom(api, '127.0.0.2', WRONG);
      assert.equal(refused.status, 429);
      assert.equal(refused.retryAfter, '100');
      assert.deepEqual(JSON.parse(refused.body).code, 'rate_limited');
      assert.equal(JSON.parse(refused.body).status, 429);
      assert.equal((await listFrom(api, '127.0.0.2', TEST_API_KEY)).status, 200, 'a valid key from the same address is served');
      assert.equal((await listFrom(api, '127.0.0.3', WRONG)).status, 401, 'another address has its own count');
    } finally {
      await api.stop();
    }
  });

  it('is on by default with a burst of 100', async () => {
    const api = await startTestService();
    try {
      const statuses = new Set<number>();
      for (let index = 0; index < 100; index++) statuses.add((await listFrom(api, '127.0.0.4', WRONG)).status);
      assert.deepEqual([...statuses], [401]);
      assert.equal((await listFrom(api, '127.0.0.4', WRONG)).status, 429);
    } finally {
      await api.stop();
    }
  });
});
