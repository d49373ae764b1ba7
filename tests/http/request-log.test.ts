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
      await sql`drop table pets`.execute(api.service.store.db);
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

describe('request log: answers Node\'s parser gives before the app', () => {
  const refusals: [name: string, bytes: string, status: number, method: string, path: string][] = [
    ['a malformed header line', 'GET /v1/pets?limit=2 HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n', 400, 'GET', '/v1/pets'],
    ['headers over the limit', `GET /v1/pets HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'GET', '/v1/pets'],
    ['a method Node does not know, on a known path', 'BREW /v1/pets HTTP/1.1\r\nHost: localhost\r\n\r\n', 405, 'BREW', '/v1/pets'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 400, 'CONNECT', 'example.com:443'],
  ];
  for (const [name, bytes, status, method, path] of refusals) {
    it(`writes exactly one request line for ${name} (${status}), in the shape of every other request line`, async () => {
      const { api, lines } = await startLoggedService();
      try {
        await api.request('/livez', { key: null, headers: { 'x-request-id': 'an-ordinary-request' } });
        const response = await api.sendRaw(bytes);
        assert.equal(response.status, status);
        const requestId = response.headers.get('x-request-id');
        const logged = lines.filter((line) => line.requestId === requestId);
        assert.equal(logged.length, 1, `one line for ${requestId}: ${JSON.stringify(lines)}`);
        const [line] = logged;
        assert.deepEqual({ ...line, time: 0, durationMs: 0 }, { level: 30, time: 0, pid: process.pid, hostname: line!.hostname, requestId, method, route: null, path, status, durationMs: 0, apiKeyId: null, msg: 'request' });
        const ordinary = lines.find((entry) => entry.requestId === 'an-ordinary-request')!;
        assert.deepEqual(Object.keys(line!), Object.keys(ordinary), 'the same keys in the same order');
        // Besides the document the test's contract check fetches.
        assert.equal(lines.filter((entry) => entry.msg === 'request' && entry.path !== '/v1/openapi.json').length, 2, 'and no other line');
      } finally {
        await api.stop();
      }
    });
  }
});

describe('log format', () => {
  it('is pretty only in development at a terminal; JSON when piped, and always in staging and production', () => {
    assert.equal(logFormat('development', true), 'pretty');
    assert.equal(logFormat('development', false), 'json');
    assert.equal(logFormat('staging', true), 'json');
    assert.equal(logFormat('production', true), 'json');
  });
});
