import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { logFormat } from '../../adapters/observability/logger.ts';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import { capturedLog } from '../support/captured-log.ts';

/** The real service with its log lines captured as parsed JSON. */
async function startLoggedService() {
  const { logger, lines } = capturedLog();
  const api = await startTestService({}, { logger });
  return { api, lines, raw: () => lines.map((line) => JSON.stringify(line)).join('\n') };
}

describe('request log', () => {
  it('writes one JSON line per request: method, route, status, duration, request id and key id, never the key', async () => {
    const { api, lines, raw } = await startLoggedService();
    try {
      const response = await api.request('/v1/pets?limit=5', { headers: { 'x-request-id': 'trace-abc-123' } });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-request-id'), 'trace-abc-123');
      const logged = lines.filter((line) => line.requestId === 'trace-abc-123');
      assert.equal(logged.length, 1);
      const [line] = logged;
      assert.equal(line!.method, 'GET');
      assert.equal(line!.route, '/v1/pets');
      assert.equal(line!.status, 200);
      assert.equal(typeof line!.durationMs, 'number');
      assert.match(line!.apiKeyId, /^env:[0-9a-f]{12}$/);
      assert.ok(!raw().includes(TEST_API_KEY), 'the key never reaches the log');
    } finally {
      await api.stop();
    }
  });

  it('writes one line for a 405, with the route of its path and the key id when the key is good', async () => {
    const { api, lines } = await startLoggedService();
    try {
      const withKey = await api.request('/v1/pets/1', { method: 'DELETE', headers: { 'x-request-id': 'not-allowed-1' } });
      const withoutKey = await api.request('/v1/pets', { method: 'PUT', key: null, headers: { 'x-request-id': 'not-allowed-2' } });
      const wrongKey = await api.request('/v1/pets', { method: 'PUT', key: 'wrong-key-0123456789abcdef', headers: { 'x-request-id': 'not-allowed-3' } });
      assert.deepEqual([withKey.status, withoutKey.status, wrongKey.status], [405, 405, 405]);
      const logged = (id: string) => lines.filter((line) => line.requestId === id).map(({ route, status, apiKeyId }) => ({ route, status, apiKeyId }));
      const [allowedKey, ...more] = logged('not-allowed-1');
      assert.equal(more.length, 0);
      assert.deepEqual({ ...allowedKey, apiKeyId: undefined }, { route: '/v1/pets/:petId', status: 405, apiKeyId: undefined });
      assert.match(String(allowedKey!.apiKeyId), /^env:[0-9a-f]{12}$/);
      assert.deepEqual(logged('not-allowed-2'), [{ route: '/v1/pets', status: 405, apiKeyId: null }]);
      assert.deepEqual(logged('not-allowed-3'), [{ route: '/v1/pets', status: 405, apiKeyId: null }]);
    } finally {
      await api.stop();
    }
  });

  it('writes one line for what Node\'s parser refuses: a 405 for an unknown method names its route, a malformed request its status', async () => {
    const { api, lines } = await startLoggedService();
    try {
      const unknownMethod = await api.sendRaw('FOO /v1/pets/7 HTTP/1.1\r\nHost: x\r\n\r\n');
      const malformed = await api.sendRaw('GET /v1/pets HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n');
      assert.deepEqual([unknownMethod.status, malformed.status], [405, 400]);
      const lineOf = (response: Response) => lines.filter((line) => line.requestId === response.headers.get('x-request-id'));
      assert.deepEqual(lineOf(unknownMethod).map(({ method, route, path, status }) => ({ method, route, path, status })), [
        { method: 'FOO', route: '/v1/pets/:petId', path: '/v1/pets/7', status: 405 },
      ]);
      assert.deepEqual(lineOf(malformed).map(({ status }) => status), [400]);
    } finally {
      await api.stop();
    }
  });

  it('writes one line for headers over the limit (431), with the keys of every other request line', async () => {
    const { api, lines } = await startLoggedService();
    try {
      await api.request('/livez', { key: null, headers: { 'x-request-id': 'an-ordinary-request' } });
      const tooLarge = await api.sendRaw(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      assert.equal(tooLarge.status, 431);
      const logged = lines.filter((line) => line.requestId === tooLarge.headers.get('x-request-id'));
      assert.deepEqual(logged.map(({ status, msg }) => ({ status, msg })), [{ status: 431, msg: 'request' }]);
      const ordinary = lines.find((line) => line.requestId === 'an-ordinary-request')!;
      assert.deepEqual(Object.keys(logged[0]!), Object.keys(ordinary));
    } finally {
      await api.stop();
    }
  });

  it('replaces an unusable X-Request-Id with a new id, and logs that one', async () => {
    const { api, lines } = await startLoggedService();
    try {
      const response = await api.request('/v1/pets', { headers: { 'x-request-id': 'x'.repeat(129) } });
      const id = response.headers.get('x-request-id')!;
      assert.match(id, /^[0-9a-f-]{36}$/);
      assert.equal(lines.filter((line) => line.requestId === id).length, 1);
    } finally {
      await api.stop();
    }
  });

  it('logs an unexpected failure with its stack and the request id, and answers a bare 500 internal', async () => {
    const { api, lines } = await startLoggedService();
    try {
      await sql`drop table pets`.execute((await api.database()).db);
      const response = await api.request('/v1/pets', { headers: { 'x-request-id': 'failing-request-1' } });
      assert.equal(response.status, 500);
      const error = await readError(response);
      assert.equal(error.code, 'internal');
      assert.doesNotMatch(error.message, /pets|sqlite|at /i, 'no detail leaves the process');
      const failure = lines.find((line) => line.level === 50 && line.requestId === 'failing-request-1');
      assert.ok(failure, 'an error line with the request id');
      assert.match(failure.err.stack, /no such table: pets/);
      assert.match(failure.err.stack, /\n\s+at /);
    } finally {
      await api.stop();
    }
  });
});

describe('log format', () => {
  it('is pretty only in development at a terminal; JSON when piped, and always in staging and production', () => {
    assert.equal(logFormat('development', true), 'pretty');
    assert.equal(logFormat('development', false), 'json');
    assert.equal(logFormat('staging', true), 'json');
    assert.equal(logFormat('production', true), 'json');
  });
});
