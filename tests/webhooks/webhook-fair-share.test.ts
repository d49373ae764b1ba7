import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { EventLog, WebhookDeliveryState } from '../../application/index.ts';
import { BACKGROUND_SHARE, createBackgroundWork } from '../../adapters/background/fair-share.ts';
import { createSqlWebhookSubscriptions } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { startWebhookDispatcher } from '../../adapters/webhooks/webhook-dispatcher.ts';
import { writeBulkLog } from '../support/bulk-log.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

const PETS = 2_000;
const BUSY_KEY_SUBSCRIPTIONS = 8;

describe('webhook delivery beside requests and other keys', () => {
  it('reads and writes one piece at a time within its share while requests come, and another key\'s replay is not queued behind one key\'s many', { timeout: 120_000 }, async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    await writeBulkLog(store.db, PETS);
    const logEnd = (await store.eventLog.readLog({ after: 0, limit: 100_000 })).at(-1)!.position;
    const delivered = new Map<string, number>();
    const receiver = createServer((request, response) => {
      const [, id, first, last] = /^msg_(.+)_(\d+)_(\d+)$/.exec(String(request.headers['webhook-id']))!;
      request.resume();
      request.on('end', () => {
        delivered.set(id!, (delivered.get(id!) ?? 0) + Number(last) - Number(first) + 1);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/h`;

    // Every database call delivery makes, as an interval of time.
    const calls: { start: number; end: number }[] = [];
    const timed = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
      const start = performance.now();
      try {
        return await call(...args);
      } finally {
        calls.push({ start, end: performance.now() });
      }
    };
    const stored = createSqlWebhookSubscriptions(store);
    const subscriptions: WebhookDeliveryState = { ...stored };
    for (const name of ['withSecret', 'lease', 'takeFree', 'release', 'fixBatch', 'advance', 'failed', 'disable'] as const) {
      (subscriptions as unknown as Record<string, unknown>)[name] = timed((stored[name] as (...args: unknown[]) => Promise<unknown>).bind(stored));
    }
    const eventLog: Pick<EventLog, 'readLog'> = { readLog: timed((query) => store.eventLog.readLog(query)) };

    const now = new Date();
    const busy: string[] = [];
    for (let index = 0; index < BUSY_KEY_SUBSCRIPTIONS; index++) {
      const { subscription } = await stored.create({ ownerKeyId: 'busy', url, batchSize: 100 }, now, 100);
      await stored.replay(subscription.id, 0);
      busy.push(subscription.id);
    }
    const { subscription: other } = await stored.create({ ownerKeyId: 'other', url, batchSize: 100 }, now, 100);
    await stored.replay(other.id, 0);

    const background = createBackgroundWork();
    // Requests keep coming throughout.
    const requests = setInterval(() => background.requestTaken(), 10);
    const started = performance.now();
    const dispatcher = startWebhookDispatcher({
      subscriptions, eventLog, commits: store.commits, clock: store.clock, logger: pino({ level: 'silent' }), source: () => 'http://petstore.test/v1',
      delivery: { allowPrivate: true, timeoutMs: 5_000, retry: { scheduleMs: [10] }, leaseMs: 30_000, maxPerKey: 100, secretOverlapMs: 60_000, maxConnections: 100 },
      background,
    });
    let busyDeliveredWhenOtherDone: number | undefined;
    try {
      const busyDelivered = () => busy.reduce((sum, id) => sum + (delivered.get(id) ?? 0), 0);
      for (;;) {
        if (busyDeliveredWhenOtherDone === undefined && (delivered.get(other.id) ?? 0) >= logEnd) busyDeliveredWhenOtherDone = busyDelivered();
        if (busyDeliveredWhenOtherDone !== undefined && busyDelivered() >= logEnd * BUSY_KEY_SUBSCRIPTIONS) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      clearInterval(requests);
      await dispatcher.close();
      receiver.close();
      await close();
    }
    const elapsed = performance.now() - started;
    calls.sort((a, b) => a.start - b.start);
    const overlapping = calls.filter((call, index) => index > 0 && call.start < calls[index - 1]!.end).length;
    assert.equal(overlapping, 0, `${overlapping} of ${calls.length} database calls overlapped another`);
    const busyMs = calls.reduce((sum, call) => sum + call.end - call.start, 0);
    assert.ok(busyMs / elapsed <= BACKGROUND_SHARE + 0.1, `delivery's database calls took ${Math.round((100 * busyMs) / elapsed)}% of the time`);
    const busyTotal = logEnd * BUSY_KEY_SUBSCRIPTIONS;
    assert.ok(busyDeliveredWhenOtherDone! < busyTotal / 2, `the other key's replay finished after ${busyDeliveredWhenOtherDone} of the busy key's ${busyTotal} events`);
  });
});
