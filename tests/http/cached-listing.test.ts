import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createApiKeyVerifier } from '../../adapters/api-keys/key-verifier.ts';
import { koaContextsDuring } from '../support/koa-contexts.ts';
import pino from 'pino';
import { createKeyCheck } from '../../adapters/http/guards/require-api-key.ts';
import { createHttpApp } from '../../adapters/http/app.ts';
import { createCachedListingBranch } from '../../adapters/http/listing-cache/cached-listing.ts';
import { serviceGuards } from '../../adapters/http/guards/service-guards.ts';
import type { RateLimiter } from '../../adapters/http/guards/rate-limit.ts';
import type { CachedListingOptions } from '../../adapters/http/listing-cache/cached-listing.ts';
import { createListingCache } from '../../adapters/http/listing-cache/listing-cache.ts';
import type { ListingCache } from '../../adapters/http/listing-cache/listing-cache.ts';
import { createRateLimiter } from '../../adapters/http/guards/rate-limit.ts';
import { beginRequest } from '../../adapters/http/pipeline/request-state.ts';
import type { AnswerBranch } from '../../adapters/http/pipeline/request-state.ts';
import { matchedBranch } from '../../adapters/http/pipeline/request-pipeline.ts';
import { routeTable } from '../../adapters/http/pipeline/route-table.ts';
import { startHttpServer } from '../../adapters/http/server/server.ts';
import { PET_USE_CASES } from '../../application/index.ts';
import type { Commits, PetStorePorts } from '../../application/index.ts';
import { DEFAULT_LIMITS } from '../../adapters/config/config.ts';
import type { ServerLimits } from '../../adapters/config/config.ts';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import { capturedLog } from '../support/captured-log.ts';

/** What a client can see of an answer, less what differs on every request (its id, date, and the count left in RateLimit). */
async function visible(response: Response) {
  const headers = [...response.headers]
    .filter(([name]) => name !== 'x-request-id' && name !== 'date')
    .map(([name, value]) => [name, name === 'ratelimit' ? value.replace(/;r=\d+;t=\d+$/, ';r=<n>;t=<n>') : value]);
  return { status: response.status, headers, body: await response.text() };
}

/** The first request of a query string misses the cache (the app answers it); the second is answered from it. */
async function missThenHit(request: () => Promise<Response>) {
  const missed = await request();
  const hit = await request();
  return { missed, hit };
}

describe('cached listings answered by the pipeline\'s branch before the app', () => {
  it('are answered without a Koa context once cached, and a miss goes through the app', async () => {
    const api = await startTestService();
    try {
      assert.equal((await api.createPet({ name: 'Rex', categoryId: 1 })).status, 201);
      const missed = await koaContextsDuring(async () => assert.equal((await api.request('/v1/pets?limit=7')).status, 200));
      assert.equal(missed, 1);
      const hits = await koaContextsDuring(async () => {
        for (let index = 0; index < 3; index++) assert.equal((await api.request('/v1/pets?limit=7')).status, 200);
      });
      assert.equal(hits, 0);
    } finally {
      await api.stop();
    }
  });

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

  it('carry the same RateLimit and RateLimit-Policy fields as the app when rate limiting is on', async () => {
    const api = await startTestService({ PETSTORE_RATE_LIMIT: '0.01,1000' });
    try {
      const { missed, hit } = await missThenHit(() => api.request('/v1/pets?limit=2'));
      assert.match(missed.headers.get('ratelimit') ?? '', /^"per-key";r=999;t=\d+$/);
      assert.match(hit.headers.get('ratelimit') ?? '', /^"per-key";r=998;t=\d+$/);
      assert.equal(hit.headers.get('ratelimit-policy'), '"per-key";q=1000;w=100000');
      assert.deepEqual(await visible(hit), await visible(missed));
    } finally {
      await api.stop();
    }
  });

  it('echo the client request id and log the same line as the app', async () => {
    const { logger, lines } = capturedLog();
    const api = await startTestService({}, { logger });
    try {
      const { missed, hit } = await missThenHit(() => api.request('/v1/pets?limit=3', { headers: { 'x-request-id': 'trace-cached-listing-1' } }));
      assert.equal(missed.headers.get('x-request-id'), 'trace-cached-listing-1');
      assert.equal(hit.headers.get('x-request-id'), 'trace-cached-listing-1');
      const logged = lines.filter((line) => line.requestId === 'trace-cached-listing-1');
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

// The branch on its own, with a cache holding one answer: which requests it takes, and what it writes.
describe('the cached listing branch', () => {
  const KEY = 'cached-listing-key-0123456789';
  const body = Buffer.from('[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]');
  const noChanges: Commits = { onCommitted: () => () => {}, refresh() {} };

  function branch(
    overrides: Partial<CachedListingOptions> & { verifier?: ReturnType<typeof createApiKeyVerifier>; corsOrigins?: string[]; rateLimiter?: RateLimiter } = {},
  ) {
    const cache = createListingCache(noChanges);
    cache.set('limit=1', cache.mark(), { body, link: '<http://x/v1/pets?limit=1&after=1>; rel="next"' }, { status: undefined, after: 0, through: 2 });
    const { verifier = createApiKeyVerifier({ environmentKeys: [KEY] }), corsOrigins = [], rateLimiter, ...rest } = overrides;
    const guards = serviceGuards({ keyCheck: createKeyCheck(verifier), rateLimiter, corsOrigins, methodsAllowedAt: () => ['GET', 'HEAD', 'POST'] });
    const listing = createCachedListingBranch({ cache, guards, readPositions: { reached: 5 }, ...rest });
    // Offered as the pipeline offers it: through the route table, which gives the branch `GET /v1/pets` alone.
    const routes = routeTable([
      { name: 'listPets', method: 'GET', template: '/v1/pets', keyed: true, branch: listing, handlers: [] },
      { name: 'getPet', method: 'GET', template: '/v1/pets/:petId', keyed: true, handlers: [] },
    ]);
    const offered: AnswerBranch = (request, response, state) => matchedBranch(routes, request, state)?.(request, response, state);
    return offered;
  }

  function request(init: { method?: string; url?: string; headers?: Record<string, string>; rawHeaders?: string[] } = {}) {
    const headers = init.headers ?? { host: 'pets.example', authorization: `Bearer ${KEY}` };
    const rawHeaders = init.rawHeaders ?? Object.entries(headers).flat();
    return { method: init.method ?? 'GET', url: init.url ?? '/v1/pets?limit=1', httpVersion: '1.1', headers, rawHeaders } as unknown as IncomingMessage;
  }

  function response() {
    const headers = new Map<string, unknown>();
    let ended: Buffer | undefined;
    let headerCalls = 0;
    const fake = {
      statusCode: 200,
      setHeader: (name: string, value: unknown) => {
        headerCalls++;
        headers.set(name.toLowerCase(), value);
      },
      writeHead: (status: number, all: Record<string, unknown>) => {
        headerCalls++;
        fake.statusCode = status;
        for (const name in all) headers.set(name.toLowerCase(), all[name]);
      },
      end: (chunk: Buffer) => {
        ended = chunk;
      },
    };
    return { fake: fake as unknown as ServerResponse, headers, body: () => ended, headerCalls: () => headerCalls };
  }

  /** Offers `incoming` to the branch with the state the pipeline would have begun; `taken` is how it answered, if it did. */
  function offer(answer: ReturnType<typeof branch>, incoming: IncomingMessage, out = response()) {
    const state = beginRequest(incoming);
    const taken = answer(incoming, out.fake, state);
    assert.ok(!(taken instanceof Promise), 'a cache without a database to ask answers at once');
    return { taken, state, out };
  }

  it('answers a cached listing with its body, Link, type and length, and says how for the record', () => {
    const { taken, out } = offer(branch(), request());
    assert.deepEqual({ ...taken, keyId: typeof taken?.keyId }, { route: '/v1/pets', path: '/v1/pets', status: 200, keyId: 'string' });
    assert.deepEqual(out.body(), body);
    assert.equal(out.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(out.headers.get('content-length'), body.length);
    assert.equal(out.headers.get('link'), '<http://x/v1/pets?limit=1&after=1>; rel="next"');
    assert.equal(out.fake.statusCode, 200);
  });

  it('writes every header of its answer at once, those decided before it (the request id, the rate limit) with its own', () => {
    const incoming = request({ headers: { host: 'pets.example', authorization: `Bearer ${KEY}`, 'x-request-id': 'listing-1' } });
    const { out } = offer(branch({ rateLimiter: createRateLimiter({ perSecond: 1, burst: 2 }, () => 0) }), incoming);
    assert.equal(out.headers.get('x-request-id'), 'listing-1');
    assert.equal(out.headers.get('ratelimit'), '"per-key";r=1;t=1');
    assert.equal(out.headers.get('content-length'), body.length);
    assert.equal(out.headerCalls(), 1, 'one writeHead, no setHeader before it');
  });

  const leftToTheApp: [string, Parameters<typeof request>[0]][] = [
    ['another method', { method: 'HEAD' }],
    ['another path', { url: '/v1/pets/1?limit=1' }],
    ['a path the app spells differently', { url: '/v1/pets/?limit=1' }],
    ['a query string not cached', { url: '/v1/pets?limit=2' }],
    ['a fragment after the query', { url: '/v1/pets?limit=1#top' }],
    ['no Host', { headers: { authorization: `Bearer ${KEY}` } }],
    ['two Host fields', { headers: { host: 'a', authorization: `Bearer ${KEY}` }, rawHeaders: ['Host', 'a', 'Host', 'b', 'Authorization', `Bearer ${KEY}`] }],
    ['two Authorization fields', { headers: { host: 'a', authorization: `Bearer ${KEY}` }, rawHeaders: ['Host', 'a', 'Authorization', `Bearer ${KEY}`, 'Authorization', 'Bearer x'] }],
    ['no key', { headers: { host: 'pets.example' } }],
    ['another scheme', { headers: { host: 'pets.example', authorization: `Basic ${KEY}` } }],
    ['a wrong key', { headers: { host: 'pets.example', authorization: 'Bearer not-a-key' } }],
  ];
  for (const [what, init] of leftToTheApp) {
    it(`leaves ${what} to the app, writing nothing`, () => {
      const { taken, out } = offer(branch(), request(init));
      assert.equal(taken, undefined);
      assert.equal(out.headers.size, 0);
      assert.equal(out.body(), undefined);
    });
  }

  it('waits for a key that must be looked up in the key table, the lookup kept on the state, and leaves a refused one to the app', async () => {
    const table = { activeKeyHashes: async () => new Map<string, number>() };
    const answer = branch({ verifier: createApiKeyVerifier({ environmentKeys: [], table }) });
    const incoming = request();
    const state = beginRequest(incoming);
    const out = response();
    const taken = answer(incoming, out.fake, state);
    assert.ok(taken instanceof Promise && state.access instanceof Promise);
    assert.equal(await taken, undefined);
    assert.equal(out.body(), undefined);
  });

  it('answers a request from an allowed browser origin with the CORS headers the app gives, and marks every answer Vary: Origin', () => {
    const answer = branch({ corsOrigins: ['https://app.example.com'] });
    const withOrigin = offer(answer, request({ headers: { host: 'pets.example', authorization: `Bearer ${KEY}`, origin: 'https://app.example.com' } }));
    assert.equal(withOrigin.taken?.status, 200);
    assert.equal(withOrigin.out.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.equal(withOrigin.out.headers.get('vary'), 'Origin');
    const { taken, out } = offer(answer, request());
    assert.equal(taken?.status, 200);
    assert.equal(out.headers.get('vary'), 'Origin');
    assert.equal(out.headers.get('access-control-allow-origin'), undefined);
  });

  it('answers a read asking for a position its cache has reached, and leaves a newer one to the app', () => {
    const answer = branch();
    const headers = (position: string) => ({ host: 'pets.example', authorization: `Bearer ${KEY}`, 'petstore-min-position': position });
    assert.equal(offer(answer, request({ headers: headers('5') })).taken?.status, 200);
    const tooNew = offer(answer, request({ headers: headers('6') }));
    assert.equal(tooNew.taken, undefined);
    assert.equal(tooNew.out.body(), undefined);
    assert.equal(offer(answer, request({ headers: headers('-1') })).taken, undefined, 'a malformed position is the app\'s to refuse');
  });

  it('takes a token for each answer, and leaves the request, with its refusal decided, to the app once the bucket is empty', () => {
    let now = 0;
    const answer = branch({ rateLimiter: createRateLimiter({ perSecond: 1, burst: 2 }, () => now) });
    const first = offer(answer, request());
    assert.equal(first.taken?.status, 200);
    assert.equal(first.out.headers.get('ratelimit'), '"per-key";r=1;t=1');
    assert.equal(offer(answer, request()).taken?.status, 200);
    const refused = offer(answer, request());
    assert.equal(refused.taken, undefined);
    assert.equal(refused.state.rate?.allowed, false);
    now += 1000;
    assert.equal(offer(answer, request()).taken?.status, 200);
  });
});

// The branch and the app together: each check decided once per request.
describe('one request pipeline', () => {
  const KEY = 'pipeline-key-0123456789';
  const limits: ServerLimits = {
    ...DEFAULT_LIMITS, maxHeaderBytes: 16384, headersTimeoutMs: 5000, requestTimeoutMs: 10000, keepAliveTimeoutMs: 5000, maxConnections: 100, shutdownGraceMs: 1000,
  };

  async function serve(cache: ListingCache, verify: () => void) {
    const verifier = createApiKeyVerifier({ environmentKeys: [KEY] });
    const counted = { verify: (key: string) => (verify(), verifier.verify(key)) };
    const { dispatch, methodsAllowedAt } = createHttpApp({
      ports: {} as PetStorePorts, verifier: counted, publicBaseUrl: () => 'http://pets.example/v1', logger: pino({ level: 'silent' }),
      rateLimit: { perSecond: 1, burst: 100 }, document: () => ({}) as never, readiness: async () => ({ ready: true as const }), corsOrigins: [],
      listingCache: cache, useCases: { ...PET_USE_CASES, listPetPage: async () => ({ pets: [], nextAfter: undefined, limit: 3, scope: { status: undefined, after: 0, through: Infinity } }) },
    });
    return startHttpServer(dispatch, { host: '127.0.0.1', port: 0, limits, methodsAllowedAt });
  }

  it('on a miss, checks the key, takes a rate-limit token and looks up the cache once each', async () => {
    let verified = 0;
    let lookedUp = 0;
    const cache: ListingCache = { get: () => (lookedUp++, undefined), mark: () => 0, set() {} };
    const server = await serve(cache, () => verified++);
    try {
      const answer = await fetch(`http://127.0.0.1:${server.port}/v1/pets?limit=3`, { headers: { authorization: `Bearer ${KEY}` } });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('ratelimit'), '"per-key";r=99;t=1');
      assert.deepEqual({ verified, lookedUp }, { verified: 1, lookedUp: 1 });
    } finally {
      await server.close();
    }
  });
});
