import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendWebhook } from '../../adapters/webhooks/webhook-request.ts';

const SEND = { allowPrivate: true, timeoutMs: 3_000, maxResponseBytes: 1024 };

describe('one webhook attempt', () => {
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        // A 200 whose body is started and never finished.
        if (request.url === '/unfinished-200') response.writeHead(200, { 'content-type': 'text/plain' }).write('working on it');
        else response.writeHead(500, { 'content-type': 'text/plain' }).end('broken');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('counts a 2xx as acknowledged when its status arrives, even when its body never finishes', async () => {
    const outcome = await sendWebhook(`${base}/unfinished-200`, { 'content-type': 'application/json' }, '{}', SEND);
    assert.deepEqual(outcome, { ok: true, status: 200 });
  });

  it('reads the start of another status\'s answer into the error', async () => {
    const outcome = await sendWebhook(`${base}/other`, { 'content-type': 'application/json' }, '{}', SEND);
    assert.deepEqual(outcome, { ok: false, status: 500, error: 'answered 500: broken' });
  });
});
