import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { addPet } from '../../application/index.ts';
import { createSqlWebhookSubscriptions } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { startWebhookDispatcher } from '../../adapters/webhooks/webhook-dispatcher.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

const HOUR_MS = 3_600_000;

describe('a subscription\'s maxPerSecond with the wall clock stepped back', () => {
  it('sends the next event about 1/maxPerSecond after the last, not an hour later', { timeout: 30_000 }, async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    let wallOffset = 0;
    const clock = { now: () => new Date(Date.now() + wallOffset) };
    const received: number[] = [];
    let delivered: () => void = () => {};
    const receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        received.push(Number(/_(\d+)$/.exec(String(request.headers['webhook-id']))![1]));
        response.writeHead(204).end();
        // The wall clock is stepped back an hour once the first event is acknowledged.
        if (received.length === 1) wallOffset = -HOUR_MS;
        delivered();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const subscriptions = createSqlWebhookSubscriptions(store);
    await subscriptions.create({ ownerKeyId: '1', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/h`, maxPerSecond: 5 }, new Date(), 100);
    await addPet(store, { name: 'Rex', categoryId: 1 });
    await addPet(store, { name: 'Kit', categoryId: 1 });
    const dispatcher = startWebhookDispatcher({
      subscriptions, eventLog: store.eventLog, commits: store.commits, clock, logger: pino({ level: 'silent' }), source: () => 'http://petstore.test/v1',
      delivery: { allowPrivate: true, timeoutMs: 5_000, retry: { scheduleMs: [1_000] }, leaseMs: 5_000, maxPerKey: 100, secretOverlapMs: 60_000, maxConnections: 10 },
    });
    try {
      // Both events within 10 s (the throttle asks for 200 ms between them); a throttle on the wall clock waits an hour.
      const both = new Promise<void>((resolve) => {
        delivered = () => received.length >= 2 && resolve();
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 10_000);
      });
      await Promise.race([both, bound]);
      clearTimeout(timer);
      assert.deepEqual(received, [1, 2]);
    } finally {
      await dispatcher.close();
      receiver.closeAllConnections();
      receiver.close();
      await close();
    }
  });
});
