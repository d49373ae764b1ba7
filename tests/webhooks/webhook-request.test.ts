import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookConnections, retryAfterTime, sendWebhook } from '../../adapters/webhooks/webhook-request.ts';

const SEND = { allowPrivate: true, timeoutMs: 3_000, maxResponseBytes: 1024, connections: createWebhookConnections() };

describe('one webhook attempt', () => {
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        // A 200 whose body is started and never finished.
        if (request.url === '/unfinished-200') response.writeHead(200, { 'content-type': 'text/plain' }).write('working on it');
        else if (request.url === '/busy') response.writeHead(429, { 'retry-after': '30' }).end();
        // No answer: the connection is left open, as a receiver that hangs leaves it.
        else if (request.url === '/silent') return;
        else if (request.url === '/overloaded') response.writeHead(503, { 'retry-after': 'Fri, 01 Jan 2100 00:00:00 GMT' }).end();
        else response.writeHead(500, { 'content-type': 'text/plain', 'retry-after': '30' }).end('broken');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    SEND.connections.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('counts a 2xx as acknowledged when its status arrives, even when its body never finishes', async () => {
    const outcome = await sendWebhook(`${base}/unfinished-200`, { 'content-type': 'application/json' }, '{}', SEND);
    assert.deepEqual(outcome, { ok: true, status: 200 });
  });

  it('sends the next attempt without waiting for the body of an unfinished 2xx before it', async () => {
    assert.deepEqual(await sendWebhook(`${base}/unfinished-200`, {}, '{}', SEND), { ok: true, status: 200 });
    const started = performance.now();
    const outcome = await sendWebhook(`${base}/other`, {}, '{}', SEND);
    const elapsedMs = performance.now() - started;
    assert.equal(outcome.status, 500);
    // Waiting for the unfinished body (or a grace for it) would take a second at least.
    assert.ok(elapsedMs < 500, `the next attempt took ${Math.round(elapsedMs)} ms`);
  });

  it('reads the start of another status\'s answer into the error, on the same connection as an unfinished 2xx before it', async () => {
    const outcome = await sendWebhook(`${base}/other`, { 'content-type': 'application/json' }, '{}', SEND);
    assert.deepEqual(outcome, { ok: false, status: 500, error: 'answered 500: broken' }, 'Retry-After only counts on a 429 or 503');
  });

  it('reads Retry-After of a 429 or a 503, in seconds or as an HTTP date', async () => {
    const before = Date.now();
    const busy = await sendWebhook(`${base}/busy`, {}, '{}', SEND);
    assert.ok(!busy.ok && busy.status === 429 && busy.retryAfter !== undefined);
    assert.ok(busy.retryAfter.getTime() >= before + 30_000 && busy.retryAfter.getTime() <= Date.now() + 30_000, busy.retryAfter.toISOString());
    const overloaded = await sendWebhook(`${base}/overloaded`, {}, '{}', SEND);
    assert.ok(!overloaded.ok && overloaded.status === 503 && overloaded.retryAfter !== undefined);
    assert.ok(overloaded.retryAfter.getTime() <= Date.now() + 7 * 24 * 3_600_000, 'at most a week away');
  });

  it('takes Retry-After seconds with leading zeros as written and caps a huge number at a week', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(retryAfterTime('0120', now)?.getTime(), now.getTime() + 120_000);
    assert.equal(retryAfterTime('99999999999999999999', now)?.getTime(), now.getTime() + 7 * 24 * 3_600_000);
    assert.equal(retryAfterTime(' 30 ', now)?.getTime(), now.getTime() + 30_000);
    assert.equal(retryAfterTime('-5', now), undefined);
    assert.equal(retryAfterTime('1.5', now), undefined);
    assert.equal(retryAfterTime('Fri, 01 Jan 2100 00:00:00 GMT', now)?.getTime(), now.getTime() + 7 * 24 * 3_600_000);
    assert.equal(retryAfterTime('Thu, 01 Jan 2026 00:01:00 GMT', now)?.getTime(), now.getTime() + 60_000);
  });

  it('sends each attempt after one that got no answer on a fresh connection, so that it reaches the receiver', async () => {
    const connections = createWebhookConnections();
    const send = (path: string, timeoutMs: number) => sendWebhook(`${base}${path}`, {}, '{}', { ...SEND, connections, timeoutMs });
    try {
      // Silent, answered, silent: the order in which a kept-alive connection's slot was once lost for good.
      for (const path of ['/silent', '/other', '/silent']) {
        const outcome = await send(path, 200);
        assert.equal(outcome.status, path === '/silent' ? null : 500, `${path}: ${JSON.stringify(outcome)}`);
      }
      for (let attempt = 1; attempt <= 3; attempt++) {
        const outcome = await send('/other', 1_000);
        assert.equal(outcome.status, 500, `attempt ${attempt} after the silent ones: ${JSON.stringify(outcome)}`);
      }
    } finally {
      connections.close();
    }
  });

  it('says when the target policy refused the address', async () => {
    const outcome = await sendWebhook(`${base}/other`, {}, '{}', { ...SEND, allowPrivate: false });
    assert.ok(!outcome.ok && outcome.refusedTarget === true);
    assert.match(outcome.error, /PETSTORE_WEBHOOKS_ALLOW_PRIVATE/);
  });
});
