import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import { DEFAULT_LIMITS } from '../../adapters/config/config.ts';
import type { ServerLimits } from '../../adapters/config/config.ts';
import { ResponsesInFlight } from '../../adapters/http/server/responses-in-flight.ts';
import { startHttpServer } from '../../adapters/http/server/server.ts';

const responses = (count: number) => Array.from({ length: count }, (_, index) => ({ index }) as unknown as ServerResponse);

describe('the responses in flight', () => {
  it('lists what was added and not deleted, whichever end a deletion takes', () => {
    const inFlight = new ResponsesInFlight();
    const [a, b, c, d] = responses(4);
    const entries = [a!, b!, c!, d!].map((response) => inFlight.add(response));
    inFlight.delete(entries[1]!);
    assert.deepEqual(new Set(inFlight), new Set([a, c, d]));
    inFlight.delete(entries[3]!);
    inFlight.delete(entries[0]!);
    assert.deepEqual([...inFlight], [c]);
    inFlight.delete(entries[2]!);
    assert.deepEqual([...inFlight], []);
  });

  it('a deleted entry holds neither neighbour, so a dead entry keeps no later answer alive', () => {
    const inFlight = new ResponsesInFlight();
    const entries = responses(3).map((response) => inFlight.add(response));
    for (const entry of entries) {
      inFlight.delete(entry);
      assert.equal(entry.next, undefined);
      assert.equal(entry.previous, undefined);
    }
  });

  it('deleting an entry twice leaves the others listed', () => {
    const inFlight = new ResponsesInFlight();
    const [a, b] = responses(2);
    const first = inFlight.add(a!);
    inFlight.add(b!);
    inFlight.delete(first);
    inFlight.delete(first);
    assert.deepEqual([...inFlight], [b]);
  });
});

describe('shutdown', () => {
  it('tells a request in flight when shutdown began that its connection closes', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => { arrived = resolve; });
    const app = new Koa();
    app.use(async (ctx) => {
      arrived();
      await released;
      ctx.body = { ok: true };
    });
    const limits: ServerLimits = { ...DEFAULT_LIMITS, shutdownGraceMs: 5000 };
    const server = await startHttpServer(app.callback(), { host: '127.0.0.1', port: 0, limits });
    const answer = new Promise<IncomingMessage>((resolve, reject) => {
      const sent = httpRequest({ host: '127.0.0.1', port: server.port, path: '/', headers: { connection: 'keep-alive' } }, resolve);
      sent.on('error', reject);
      sent.end();
    });
    await arrival;
    const closed = server.close();
    release();
    const response = await answer;
    response.resume();
    assert.equal(response.headers.connection, 'close');
    await closed;
  });
});
