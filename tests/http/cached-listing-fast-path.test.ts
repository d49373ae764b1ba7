import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createApiKeyVerifier } from '../../adapters/api-keys/key-verifier.ts';
import { createCachedListingLane } from '../../adapters/http/cached-listing-fast-path.ts';
import type { CachedListingLaneOptions } from '../../adapters/http/cached-listing-fast-path.ts';
import { createListingCache } from '../../adapters/http/listing-cache.ts';
import { createRateLimiter } from '../../adapters/http/rate-limit.ts';
import type { RequestFields } from '../../adapters/observability/request-log.ts';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import { capturedLog } from '../support/captured-log.ts';
import type { CatalogChanges } from '../../adapters/store/catalog-changes.ts';

/** What a client can see of an answer, less what differs on every request. */
async function visible(response: Response) {
  const headers = [...response.headers].filter(([name]) => name !== 'x-request-id' && name !== 'date');
  return { status: response.status, headers, body: await response.text() };
}

/** The first request of a query string misses the cache (the app answers it); the second is answered from it. */
async function missThenHit(request: () => Promise<Response>) {
  const missed = await request();
  const hit = await request();
  return { missed, hit };
}

describe('cached listings answered before the app', () => {
  it('give the same status, headers and body as the app, on every filter, with and without a next page', async () => {
    const api = await startTestService();
    try {
      for (let index = 0; index < 5; index++) assert.equal((await api.createPet({ name: `pet-${index}`, categoryId: 1, status: index % 2 ? 'sold' : 'available' })).status, 201);
      for (const query of ['', '?limit=2', '?limit=2&status=available', '?status=sold&after=1', '?limit=100&status=pending']) {
        const { missed, hit } = await missThenHit(() => api.request(`/v1/pets${query}`));
        assert.deepEqual(await visible(hit), await visible(missed), query);
        assert.notEqual(hit.headers.get('x-request-id'), missed.headers.get('x-request-id'));
      }
    } finally {
      await api.stop();
    }
  });

  it('echo the client request id and log the same line as the app', async () => {
    const { logger, lines } = capturedLog();
    const api = await startTestService({}, { logger });
    try {
      const { missed, hit } = await missThenHit(() => api.request('/v1/pets?limit=3', { headers: { 'x-request-id': 'trace-lane-1' } }));
      assert.equal(missed.headers.get('x-request-id'), 'trace-lane-1');
      assert.equal(hit.headers.get('x-request-id'), 'trace-lane-1');
      const logged = lines.filter((line) => line.requestId === 'trace-lane-1');
      assert.equal(logged.length, 2);
      const comparable = (line: Record<string, unknown>) => ({ ...line, time: 0, durationMs: typeof line.durationMs });
      assert.deepEqual(comparable(logged[1]!), comparable(logged[0]!));
      assert.equal(logged[1]!.route, '/v1/pets');
      assert.equal(logged[1]!.status, 200);
    } finally {
      await api.stop();
    }
  });

  it('count against the rate limit with the same fields, and a refused request still gets 429', async () => {
    const api = await startTestService({ PETSTORE_RATE_LIMIT: '0.01,3' });
    try {
      const first = await api.request('/v1/pets?limit=4');
      const second = await api.request('/v1/pets?limit=4');
      assert.equal(first.headers.get('ratelimit'), '"per-key";r=2;t=100');
      assert.equal(second.headers.get('ratelimit'), '"per-key";r=1;t=100');
      assert.equal(second.headers.get('ratelimit-policy'), first.headers.get('ratelimit-policy'));
      assert.equal((await api.request('/v1/pets?limit=4')).status, 200);
      const refused = await api.request('/v1/pets?limit=4');
      assert.equal(refused.status, 429);
      assert.equal((await readError(refused)).code, 'rate_limited');
    } finally {
      await api.stop();
    }
  });

  it('vary by Origin when CORS is on, and leave requests with an Origin to the app', async () => {
    const api = await startTestService({ PETSTORE_CORS_ORIGINS: 'https://app.example.com' });
    try {
      const { missed, hit } = await missThenHit(() => api.request('/v1/pets?limit=2'));
      assert.equal(hit.headers.get('vary'), 'Origin');
      assert.deepEqual(await visible(hit), await visible(missed));
      const fromBrowser = await api.request('/v1/pets?limit=2', { headers: { origin: 'https://app.example.com' } });
      assert.equal(fromBrowser.status, 200);
      assert.equal(fromBrowser.headers.get('access-control-allow-origin'), 'https://app.example.com');
    } finally {
      await api.stop();
    }
  });

  it('are counted in the request metrics under the route', async () => {
    const api = await startTestService({ PETSTORE_METRICS: 'true' });
    try {
      await missThenHit(() => api.request('/v1/pets?limit=2'));
      const text = await (await api.request('/metrics', { key: null })).text();
      assert.match(text, /petstore_http_request_duration_seconds_count\{method="GET",route="\/v1\/pets",status="200"\} 2\n/);
    } finally {
      await api.stop();
    }
  });
});

// The lane on its own, with a cache holding one answer: which requests it takes, and what it writes.
describe('the cached listing lane', () => {
  const KEY = 'lane-key-0123456789';
  const body = Buffer.from('[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]');
  const noChanges: CatalogChanges = { subscribe() {}, refresh() {} };

  function lane(overrides: Partial<CachedListingLaneOptions> = {}) {
    const cache = createListingCache(noChanges);
    cache.set('limit=1', cache.mark(), { body, link: '<http://x/v1/pets?limit=1&after=1>; rel="next"' }, { status: undefined, after: 0, through: 2 });
    const logged: RequestFields[] = [];
    const answer = createCachedListingLane({
      cache, verifier: createApiKeyVerifier({ environmentKeys: [KEY] }), logRequest: (fields) => logged.push(fields), crossOrigin: false, ...overrides,
    });
    return { answer, logged };
  }

  function request(init: { method?: string; url?: string; headers?: Record<string, string>; rawHeaders?: string[] } = {}) {
    const headers = init.headers ?? { host: 'pets.example', authorization: `Bearer ${KEY}` };
    const rawHeaders = init.rawHeaders ?? Object.entries(headers).flat();
    return { method: init.method ?? 'GET', url: init.url ?? '/v1/pets?limit=1', headers, rawHeaders } as unknown as IncomingMessage;
  }

  function response() {
    const headers = new Map<string, unknown>();
    let ended: Buffer | undefined;
    const fake = {
      setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), value),
      end: (chunk: Buffer) => {
        ended = chunk;
      },
    };
    return { fake: fake as unknown as ServerResponse, headers, body: () => ended };
  }

  it('answers a cached listing with its body, Link, type, length and a request id, and logs it', () => {
    const { answer, logged } = lane();
    const out = response();
    assert.equal(answer(request(), out.fake), true);
    assert.deepEqual(out.body(), body);
    assert.equal(out.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(out.headers.get('content-length'), body.length);
    assert.equal(out.headers.get('link'), '<http://x/v1/pets?limit=1&after=1>; rel="next"');
    assert.match(String(out.headers.get('x-request-id')), /^[0-9a-f-]{36}$/);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.status, 200);
    assert.equal(logged[0]!.requestId, out.headers.get('x-request-id'));
  });

  const leftToTheApp: [string, Parameters<typeof request>[0]][] = [
    ['another method', { method: 'HEAD' }],
    ['another path', { url: '/v1/pets/1?limit=1' }],
    ['a path the app spells differently', { url: '/v1/pets/?limit=1' }],
    ['a query string not cached', { url: '/v1/pets?limit=2' }],
    ['a fragment after the query', { url: '/v1/pets?limit=1#top' }],
    ['no Host', { headers: { authorization: `Bearer ${KEY}` } }],
    ['two Host fields', { headers: { host: 'a', authorization: `Bearer ${KEY}` }, rawHeaders: ['Host', 'a', 'Host', 'b', 'Authorization', `Bearer ${KEY}`] }],
    ['no key', { headers: { host: 'pets.example' } }],
    ['another scheme', { headers: { host: 'pets.example', authorization: `Basic ${KEY}` } }],
    ['a wrong key', { headers: { host: 'pets.example', authorization: 'Bearer not-a-key' } }],
  ];
  for (const [what, init] of leftToTheApp) {
    it(`leaves ${what} to the app, writing nothing`, () => {
      const { answer, logged } = lane();
      const out = response();
      assert.equal(answer(request(init), out.fake), false);
      assert.equal(out.headers.size, 0);
      assert.equal(out.body(), undefined);
      assert.equal(logged.length, 0);
    });
  }

  it('leaves a key that must be looked up in the key table to the app', () => {
    const table = { activeKeyHashes: async () => new Map<string, number>() };
    const { answer } = lane({ verifier: createApiKeyVerifier({ environmentKeys: [], table }) });
    assert.equal(answer(request(), response().fake), false);
  });

  it('leaves a request from a browser origin to the app when CORS is on, and marks its own answers Vary: Origin', () => {
    const { answer } = lane({ crossOrigin: true });
    const withOrigin = request({ headers: { host: 'pets.example', authorization: `Bearer ${KEY}`, origin: 'https://app.example.com' } });
    assert.equal(answer(withOrigin, response().fake), false);
    const out = response();
    assert.equal(answer(request(), out.fake), true);
    assert.equal(out.headers.get('vary'), 'Origin');
  });

  it('takes a token for each answer, and leaves the request to the app once the bucket is empty', () => {
    let now = 0;
    const { answer } = lane({ rateLimiter: createRateLimiter({ perSecond: 1, burst: 2 }, () => now) });
    const first = response();
    assert.equal(answer(request(), first.fake), true);
    assert.equal(first.headers.get('ratelimit'), '"per-key";r=1;t=1');
    assert.equal(answer(request(), response().fake), true);
    assert.equal(answer(request(), response().fake), false);
    now += 1000;
    assert.equal(answer(request(), response().fake), true);
  });
});
