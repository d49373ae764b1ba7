import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { addPet } from '../../application/index.ts';
import type { WebhookDeliveryState } from '../../application/index.ts';
import { createSqlWebhookSubscriptions } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { startWebhookDispatcher } from '../../adapters/webhooks/webhook-dispatcher.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

const EVENTS = 300;

describe('webhook delivery one event at a time', () => {
  it('stores positions behind delivery, fewer writes than events, never ahead of the last acknowledged event, and the last one on stop', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    // The receiver answers 2xx in order; every 7th first attempt fails, so failures come between acknowledgements.
    let acknowledged = -1;
    let requests = 0;
    const received: number[] = [];
    const receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const position = Number(/_(\d+)$/.exec(String(request.headers['webhook-id']))![1]);
        if (++requests % 7 === 0) {
          response.writeHead(500).end();
          return;
        }
        received.push(position);
        acknowledged = Math.max(acknowledged, position);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const stored = createSqlWebhookSubscriptions(store);
    const advances: number[] = [];
    const subscriptions: WebhookDeliveryState = {
      ...stored,
      async advance(id, run, position, now, attempts) {
        assert.ok(position <= acknowledged, `position ${position} stored while the last acknowledged event is ${acknowledged}`);
        advances.push(position);
        // A slow store: acknowledgements meanwhile must wait for the next write rather than each make its own.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return stored.advance(id, run, position, now, attempts);
      },
    };
    const { subscription } = await stored.create({ ownerKeyId: '1', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/h` }, new Date(), 100);
    for (let index = 0; index < EVENTS; index++) await addPet(store, { name: `Rex ${index}`, categoryId: 1 });
    const last = (await store.eventLog.readLog({ after: 0, limit: 10_000 })).at(-1)!.position;
    const dispatcher = startWebhookDispatcher({
      subscriptions, eventLog: store.eventLog, commits: store.commits, clock: store.clock, logger: pino({ level: 'silent' }), source: () => 'http://petstore.test/v1',
      delivery: { allowPrivate: true, timeoutMs: 5_000, retry: { scheduleMs: Array(100).fill(1) }, leaseMs: 5_000, maxPerKey: 100, secretOverlapMs: 60_000, maxConnections: 10 },
    });
    try {
      for (let waited = 0; acknowledged < last; waited += 10) {
        assert.ok(waited < 60_000, `delivered up to ${acknowledged} of ${last}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // The receiver counts an event acknowledged as it answers; a stop before the dispatcher has read that
      // answer rightly sends the event again later. Time to read it; then the stop must leave the last stored.
      await new Promise((resolve) => setTimeout(resolve, 250));
      await dispatcher.close();
      assert.deepEqual(received, [...new Set(received)].sort((a, b) => a - b), 'in order, each once');
      assert.equal(received.length, EVENTS);
      assert.equal((await stored.get(subscription.id))!.position, last, 'the last acknowledged position is stored on stop');
      // A failed attempt is written at once, with the position acknowledged before it, and the retry that
      // follows it is stored alone: two writes a failure by design. The acknowledgements between failures
      // are what coalesce: without it they would make a write each.
      const failed = requests - received.length;
      const coalescable = advances.length - 2 * failed;
      assert.ok(coalescable < (EVENTS - failed) / 2, `${advances.length} position writes for ${EVENTS} events and ${failed} failures: coalesced`);
      assert.deepEqual(advances, [...advances].sort((a, b) => a - b), 'positions only move forward');
      const attempts = await stored.attempts(subscription.id, { limit: 100 }, new Date());
      assert.equal(attempts.length, 100, 'the newest 100 attempts are kept, written with the positions and the failures');
      assert.deepEqual(attempts[0]!.positions, [last], 'newest first');
      assert.equal(attempts[0]!.messageId, `msg_${subscription.id}_${last}`);
      const failures = attempts.flatMap((attempt, index) => (attempt.responseStatus === 500 ? [index] : []));
      assert.ok(failures.length >= 10, `${failures.length} failed attempts among the newest 100`);
      for (const index of failures) {
        assert.match(attempts[index]!.error!, /^answered 500/);
        if (index > 0) assert.deepEqual([attempts[index - 1]!.messageId, attempts[index - 1]!.responseStatus], [attempts[index]!.messageId, 204], 'the retry that followed');
      }
      assert.ok(attempts.every((attempt) => (attempt.responseStatus === 204) === (attempt.error === null) && attempt.durationMs >= 0));
    } finally {
      await dispatcher.close();
      receiver.closeAllConnections();
      receiver.close();
      await close();
    }
  });
});
