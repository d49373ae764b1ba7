import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSqlWebhookSubscriptions } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { capturedLog } from '../support/captured-log.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import { fastRetries } from '../support/webhook-load.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** A receiver on loopback whose answer each test chooses per path; it keeps when each request arrived. */
interface Receiver {
  readonly base: string;
  readonly arrivals: Map<string, number[]>;
  answer: (path: string, request: IncomingMessage, response: ServerResponse) => void;
  /** Resolves once `path` has had `count` requests. */
  requests(path: string, count: number): Promise<void>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const waiters = new Set<() => void>();
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const path = request.url ?? '/';
      receiver.arrivals.set(path, [...(receiver.arrivals.get(path) ?? []), performance.now()]);
      for (const waiter of [...waiters]) waiter();
      receiver.answer(path, request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: Receiver = {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals: new Map(),
    answer: (_path, _request, response) => response.writeHead(204).end(),
    requests(path, count) {
      return new Promise((resolve) => {
        const check = () => {
          if ((receiver.arrivals.get(path)?.length ?? 0) < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return receiver;
}

async function subscribe(api: TestService, body: Record<string, unknown>): Promise<string> {
  const response = await api.request('/v1/webhooks', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { id: string }).id;
}

async function deliveryState(api: TestService, id: string): Promise<Record<string, any>> {
  return (await (await api.request(`/v1/webhooks/${id}/deliveries`)).json()) as Record<string, any>;
}

describe('webhook back-pressure', () => {
  let api: TestService;
  let receiver: Receiver;

  before(async () => {
    receiver = await startReceiver();
    api = await startTestService({ PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true', PETSTORE_WEBHOOK_RETRY_SCHEDULE: fastRetries(10, 20), PETSTORE_WEBHOOK_TIMEOUT_MS: '60000' });
  });
  after(async () => {
    await api.stop();
    await receiver.close();
  });

  it('disables a subscription whose receiver answers 410 Gone, makes no more attempts, and resumes it from the event it stopped at', async () => {
    let gone = true;
    receiver.answer = (path, _request, response) => response.writeHead(path === '/gone' && gone ? 410 : 204).end();
    const id = await subscribe(api, { url: `${receiver.base}/gone` });
    await api.createPet({ name: 'Gone', categoryId: 1 });
    await receiver.requests('/gone', 1);
    let state = await deliveryState(api, id);
    for (let tries = 0; tries < 200 && state.status !== 'disabled'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      state = await deliveryState(api, id);
    }
    assert.equal(state.status, 'disabled');
    assert.match(state.lastError, /answered 410/);
    assert.equal(state.nextTryAt, null);
    assert.equal(((await (await api.request(`/v1/webhooks/${id}`)).json()) as { status: string }).status, 'disabled');
    // Another event commits; a disabled subscription is not tried (retries here come every 10-20 ms).
    await api.createPet({ name: 'Unheard', categoryId: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(receiver.arrivals.get('/gone')!.length, 1, 'one attempt, no retry');

    gone = false;
    const resumed = await api.request(`/v1/webhooks/${id}/resume`, { method: 'POST' });
    assert.equal(((await resumed.json()) as { status: string }).status, 'active');
    await receiver.requests('/gone', 3);
    assert.equal((await deliveryState(api, id)).status, 'active');
  });

  it('waits at least as long as a 429 or 503 asked with Retry-After before the next attempt', async () => {
    receiver.answer = (path, _request, response) => {
      const answered = path === '/busy' ? receiver.arrivals.get(path)!.length : 0;
      if (answered === 1) response.writeHead(429, { 'retry-after': '1' }).end();
      else if (answered === 2) response.writeHead(503, { 'retry-after': new Date(Date.now() + 2000).toUTCString() }).end();
      else response.writeHead(204).end();
    };
    await subscribe(api, { url: `${receiver.base}/busy` });
    await api.createPet({ name: 'Busy', categoryId: 1 });
    await receiver.requests('/busy', 3);
    const [first, second, third] = receiver.arrivals.get('/busy')!;
    // The schedule alone would have retried after 10-20 ms.
    assert.ok(second! - first! >= 990, `the second attempt ${second! - first!} ms after the first (Retry-After: 1)`);
    // An HTTP date has whole seconds: at least one second, at most two, after the answer.
    assert.ok(third! - second! >= 990, `the third attempt ${third! - second!} ms after the second (Retry-After: a date 2 s on)`);
  });

  it('sends a subscription with maxPerSecond no more requests a second than it says', async () => {
    receiver.answer = (_path, _request, response) => response.writeHead(204).end();
    const id = await subscribe(api, { url: `${receiver.base}/slow`, maxPerSecond: 5 });
    assert.equal(((await (await api.request(`/v1/webhooks/${id}`)).json()) as { maxPerSecond: number }).maxPerSecond, 5);
    for (let index = 0; index < 6; index++) await api.createPet({ name: `Slow ${index}`, categoryId: 1 });
    await receiver.requests('/slow', 6);
    const arrivals = receiver.arrivals.get('/slow')!;
    // Sent 200 ms apart at least; on arrival, each request's trip (the first one's connecting) blurs that a little.
    assert.ok(arrivals[5]! - arrivals[0]! >= 800, `6 requests within ${arrivals[5]! - arrivals[0]!} ms`);
  });

  it('refuses maxPerSecond outside 1 to 1000', async () => {
    for (const maxPerSecond of [0, 1001, 1.5, '5']) {
      const response = await api.request('/v1/webhooks', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ url: `${receiver.base}/x`, maxPerSecond }) });
      assert.equal(response.status, 400, String(maxPerSecond));
    }
  });

  it('never lets a subscription whose receiver does not answer delay another on the same host and port', { timeout: 30_000 }, async () => {
    receiver.answer = (path, _request, response) => {
      if (path !== '/stuck') response.writeHead(204).end();
      // '/stuck' is never answered; the attempts' timeout is a minute.
    };
    for (let index = 0; index < 70; index++) await subscribe(api, { url: `${receiver.base}/stuck`, types: ['com.petstore.pet.added.v1'] });
    await api.createPet({ name: 'Stuck', categoryId: 1 });
    // More requests hang than one shared pool of 64 connections per host:port holds.
    await receiver.requests('/stuck', 64);
    await subscribe(api, { url: `${receiver.base}/fine` });
    await api.createPet({ name: 'Fine', categoryId: 1 });
    await receiver.requests('/fine', 1);
  });
});

describe('webhook targets refused at delivery', () => {
  it('logs a delivery refused by PETSTORE_WEBHOOKS_ALLOW_PRIVATE at warn once per subscription, naming the variable', async () => {
    const receiver = await startReceiver();
    const { logger, lines } = capturedLog();
    // A subscription made where private targets were allowed (the CLI with the variable set), delivered by a service without it.
    const api = await startTestService({ PETSTORE_WEBHOOK_RETRY_SCHEDULE: fastRetries(10, 20), PETSTORE_WEBHOOK_LEASE_MS: '300' }, { logger });
    try {
      const { subscription } = await createSqlWebhookSubscriptions(await api.database()).create({ ownerKeyId: 'env:0', url: `${receiver.base}/private` }, new Date(), 100);
      await api.createPet({ name: 'Private', categoryId: 1 });
      const attempts = async () => ((await (await api.database()).db.selectFrom('webhooks').select('attempts').where('id', '=', subscription.id).executeTakeFirst())?.attempts ?? 0);
      for (let tries = 0; tries < 300 && (await attempts()) < 5; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok((await attempts()) >= 5);
      const warnings = lines.filter((line) => line.level === 40 && line.webhookId === subscription.id);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.match(warnings[0]!.lastError, /PETSTORE_WEBHOOKS_ALLOW_PRIVATE/);
      assert.equal(receiver.arrivals.size, 0, 'nothing reached the private address');
    } finally {
      await api.stop();
      await receiver.close();
    }
  });
});
