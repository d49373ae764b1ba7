import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addPet, StoreUnavailable } from '../../application/index.ts';
import type { WebhookDeliveryState } from '../../application/index.ts';
import { createSqlWebhookSubscriptions } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { startWebhookDispatcher } from '../../adapters/webhooks/webhook-dispatcher.ts';
import { capturedLog } from '../support/captured-log.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

const FAULT = 'the database is busy with another process\'s write; try again';

/** Waits until `done` holds, checking every 10 ms, failing after `limitMs`. */
async function until(done: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    assert.ok(waited < limitMs, `still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('webhook delivery under a storage fault', () => {
  it('logs the fault once, without a stack, however many lease rounds, reads and writes it fails, and delivers once it ends', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    let delivered = 0;
    const receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        delivered++;
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const stored = createSqlWebhookSubscriptions(store);
    /** Which calls fail with the fault, and how often each was made while failing. */
    const failing = new Set<string>(['lease', 'takeFree']);
    const failed = new Map<string, number>();
    const faulty = <K extends keyof WebhookDeliveryState>(name: K): WebhookDeliveryState[K] => (async (...args: unknown[]) => {
      if (failing.has(name)) {
        failed.set(name, (failed.get(name) ?? 0) + 1);
        throw new StoreUnavailable(FAULT, { cause: Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }) });
      }
      return (stored[name] as (...args: unknown[]) => unknown)(...args);
    }) as WebhookDeliveryState[K];
    const subscriptions: WebhookDeliveryState = {
      ...stored, lease: faulty('lease'), takeFree: faulty('takeFree'), withSecret: faulty('withSecret'), advance: faulty('advance'),
    };
    await stored.create({ ownerKeyId: '1', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/h` }, new Date(), 100);
    const { logger, lines } = capturedLog();
    const dispatcher = startWebhookDispatcher({
      subscriptions, eventLog: store.eventLog, commits: store.commits, clock: store.clock, logger, source: () => 'http://petstore.test/v1',
      delivery: { allowPrivate: true, timeoutMs: 5_000, retry: { scheduleMs: [1] }, leaseMs: 60, maxPerKey: 100, secretOverlapMs: 60_000, maxConnections: 10 },
    });
    try {
      await until(() => (failed.get('lease') ?? 0) >= 5, 'five failed lease rounds');
      failing.clear();
      failing.add('withSecret');
      await until(() => (failed.get('withSecret') ?? 0) >= 2, 'two failed reads of the subscription');
      failing.clear();
      failing.add('advance');
      await addPet(store, { name: 'Rex', categoryId: 1 });
      await until(() => delivered >= 1 && (failed.get('advance') ?? 0) >= 8, 'the delivered position failing to be stored');
      failing.clear();
      await addPet(store, { name: 'Max', categoryId: 1 });
      await until(() => delivered >= 2, 'delivery after the fault');
    } finally {
      await dispatcher.close();
      receiver.close();
      await close();
    }
    const text = lines.map((line) => JSON.stringify(line));
    assert.deepEqual(text.filter((line) => /stack|"err"/.test(line)), [], 'no stack in the log');
    const faults = lines.filter((line) => line.fault === FAULT);
    assert.equal(faults.length, 1, `the fault logged once, not ${faults.length} times`);
    assert.equal(faults[0]!.code, 'SQLITE_BUSY');
  });
});
