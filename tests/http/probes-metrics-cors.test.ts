import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

let api: TestService;

before(async () => {
  api = await startTestService({ PETSTORE_CORS_ORIGINS: 'https://app.example.com,HTTPS://Admin.Example.com:443' });
});

after(async () => {
  await api.stop();
});

describe('GET /livez, GET /healthz and GET /readyz', () => {
  for (const path of ['/livez', '/healthz']) {
    it(`answers ${path} 200 without a key`, async () => {
      const response = await api.request(path, { key: null });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await response.json(), { status: 'ok' });
    });
  }

  it('answers /readyz 200 without a key when the database answers and every migration is applied', async () => {
    const response = await api.request('/readyz', { key: null });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ready' });
  });

  it('answers /readyz 503 unavailable, naming the migration, when one is not applied', async () => {
    const other = await startTestService();
    try {
      await sql`delete from kysely_migration where name = '0002_idempotency_keys'`.execute((await other.database()).db);
      const response = await other.request('/readyz', { key: null });
      assert.equal(response.status, 503);
      const error = await readError(response);
      assert.equal(error.code, 'unavailable');
      assert.match(error.message, /0002_idempotency_keys/);
      assert.equal((await other.request('/livez', { key: null })).status, 200, 'alive all the same');
    } finally {
      await other.stop();
    }
  });

  it('once shutdown begins answers /readyz 503 at once, serves on through the shutdown delay, then stops accepting', async () => {
    const other = await startTestService({ PETSTORE_SHUTDOWN_DELAY_MS: '400' });
    try {
      assert.equal((await other.request('/readyz', { key: null })).status, 200);
      let closed = false;
      const closing = other.service.close().then(() => (closed = true));
      const readiness = await other.request('/readyz', { key: null });
      assert.equal(readiness.status, 503);
      assert.equal(readiness.headers.get('retry-after'), '1');
      assert.match((await readError(readiness)).message, /shutting down/);
      assert.equal((await other.request('/livez', { key: null })).status, 200, 'alive while draining');
      assert.equal((await other.request('/v1/pets')).status, 200, 'requests are served during the delay');
      assert.equal(closed, false, 'the listener is still open');
      await closing;
      await assert.rejects(fetch(`${other.origin}/livez`), 'the listener is closed');
    } finally {
      await other.stop();
    }
  });

  it('keeps the 405 rule on the probe paths', async () => {
    const response = await api.request('/healthz', { method: 'POST', key: null });
    assert.equal(response.status, 405);
    assert.equal((await readError(response)).code, 'method_not_allowed');
    assert.deepEqual(response.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD']);
  });
});

describe('GET /metrics', () => {
  it('serves Prometheus text in development without a key: request durations, events appended, pets by status, process metrics', async () => {
    assert.equal((await api.createPet({ name: 'Counted', categoryId: 1, status: 'pending' })).status, 201);
    assert.equal((await api.createPet({ name: 'Counted too', categoryId: 1 })).status, 201);
    const response = await api.request('/metrics', { key: null });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.match(text, /^petstore_http_request_duration_seconds_count\{method="POST",route="\/v1\/pets",status="201"\} [1-9]/m);
    assert.match(text, /^petstore_http_request_duration_seconds_bucket\{le="0\.1",method="GET",route="\/healthz",status="200"\} /m);
    assert.match(text, /^petstore_events_appended_total\{type="PetAdded"\} [2-9]/m);
    assert.match(text, /^petstore_pets\{status="pending"\} [1-9]/m);
    assert.match(text, /^petstore_pets\{status="none"\} [1-9]/m);
    assert.match(text, /^process_cpu_seconds_total /m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
  });

  it('labels unmatched requests by "unmatched", never by their raw path', async () => {
    await api.request('/v1/pets/1/whatever-path-12345');
    const text = await (await api.request('/metrics', { key: null })).text();
    assert.doesNotMatch(text, /whatever-path-12345/);
    assert.match(text, /route="unmatched",status="404"/);
  });

  for (const [environment, served] of [
    [{ PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'https://api.example.com/v1' }, false],
    [{ PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://staging.example.com/v1', PETSTORE_METRICS: 'true' }, true],
    [{ PETSTORE_METRICS: 'false' }, false],
  ] as const) {
    it(`is ${served ? 'served' : 'not found'} with ${JSON.stringify(environment)}`, async () => {
      const other = await startTestService(environment);
      try {
        const response = await other.request('/metrics', { key: null });
        assert.equal(response.status, served ? 200 : 404);
        if (!served) assert.equal((await readError(response)).code, 'not_found');
      } finally {
        await other.stop();
      }
    });
  }
});

describe('CORS', () => {
  const preflight = (path: string, origin = 'https://app.example.com') =>
    api.request(path, {
      method: 'OPTIONS',
      key: null,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('answers a preflight from an allowed origin with 204, without a key', async () => {
    const response = await preflight('/v1/pets');
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
  });

  it('compares origins as browsers send them (configured in another case, with the default port)', async () => {
    const response = await preflight('/v1/pets', 'https://admin.example.com');
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://admin.example.com');
  });

  it('exposes Location, ETag, Link, Deprecation, Sunset and X-Request-Id on answers to an allowed origin, errors included', async () => {
    for (const [path, status] of [['/v1/pets', 200], ['/v1/pets/999999', 404]] as const) {
      const response = await api.request(path, { headers: { origin: 'https://app.example.com' } });
      assert.equal(response.status, status);
      assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example.com');
      const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(',').map((name) => name.trim().toLowerCase());
      for (const name of ['location', 'etag', 'link', 'deprecation', 'sunset', 'x-request-id', 'ratelimit', 'ratelimit-policy']) assert.ok(exposed.includes(name), name);
    }
  });

  it('gives no CORS headers to another origin, and its preflight gets the usual 405', async () => {
    const response = await api.request('/v1/pets', { headers: { origin: 'https://evil.example.com' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
    const refused = await preflight('/v1/pets', 'https://evil.example.com');
    assert.equal(refused.status, 405);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
  });

  it('keeps 404 for a preflight to an unknown path and 405 for an OPTIONS that is no preflight', async () => {
    const unknown = await preflight('/v1/pets/');
    assert.equal(unknown.status, 404);
    assert.equal((await readError(unknown)).code, 'not_found');
    const plain = await api.request('/v1/pets', { method: 'OPTIONS', headers: { origin: 'https://app.example.com' } });
    assert.equal(plain.status, 405);
  });

  it('sends no CORS headers at all when no origin is configured (the default)', async () => {
    const other = await startTestService();
    try {
      const response = await other.request('/v1/pets', { headers: { origin: 'https://app.example.com' } });
      assert.equal(response.headers.get('access-control-allow-origin'), null);
      assert.equal((await other.request('/v1/pets', { method: 'OPTIONS', key: null, headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' } })).status, 405);
    } finally {
      await other.stop();
    }
  });
});
