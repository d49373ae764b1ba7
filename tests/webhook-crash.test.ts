import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLOUD_EVENT_TYPES } from '../contract/event-feed.ts';
import { seedFrom } from './support/seeded-random.ts';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { temporaryDirectory } from './support/temporary-store.ts';
import { distinctDeliveries, startWebhookReceiver } from './support/webhook-receiver.ts';
import { freePort } from '../scripts/free-port.ts';
import { assertDeliveredInOrder, checkTakeoverOnKill, failingAtRandom, FAST_WEBHOOKS, feedPositions, WEBHOOK_TEST_KEY as KEY, writeWhile } from './support/webhook-load.ts';
import { openSqlPetStore } from '../adapters/store/open-store.ts';

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const ADDED = CLOUD_EVENT_TYPES.PetAdded;

describe('webhooks across a crash (SIGKILL) of the service', () => {
  it('a receiver failing at random and stopped for a while ends with every event of its type, in order, while writers ran (batches of up to 10, each the same on every attempt)', { timeout: 180_000 }, async () => {
    const seed = seedFrom('WEBHOOK_SEED');
    const directory = temporaryDirectory('webhook-crash');
    const environment = { PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY, PORT: String(await freePort()), ...FAST_WEBHOOKS };
    const receiver = await startWebhookReceiver();
    failingAtRandom(receiver, seed);
    const services: ServiceProcess[] = [];
    try {
      services.push(startServiceProcess(environment));
      let base = await services[0]!.listening;
      const created = await fetch(`${base}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, types: [ADDED], batchSize: 10 }) });
      assert.equal(created.status, 201);
      receiver.secret = ((await created.json()) as { secret: string }).secret;

      let writing = true;
      const writers = [writeWhile(() => base, () => writing), writeWhile(() => base, () => writing)];
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= 30, 60_000);
      services[0]!.signal('SIGKILL');
      await services[0]!.exited;
      // The receiver goes away too, while the service comes back and the writers go on.
      await receiver.stop();
      services.push(startServiceProcess(environment));
      base = await services[1]!.listening;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await receiver.start();
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= 60, 60_000);
      writing = false;
      const written = (await Promise.all(writers)).reduce((sum, count) => sum + count, 0);
      assert.ok(written >= 60, `${written} pets written`);

      const expected = await feedPositions(base, ADDED);
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= expected.length, 120_000);
      assertDeliveredInOrder(receiver, expected, seed);
      assert.ok(receiver.faulted > 0, 'the receiver failed some requests');
      assert.ok(receiver.batches.some((size) => size > 1), 'some requests carried several events');
    } finally {
      for (const service of services) service.cleanup();
      await receiver.close();
      directory.remove();
    }
  });

  it('two processes on one SQLite file: one delivers at a time; when it is killed the other takes over, and every event arrives in order', { timeout: 180_000 }, async () => {
    const seed = seedFrom('WEBHOOK_SEED');
    const directory = temporaryDirectory('webhook-two-processes');
    const path = directory.file('petstore.db');
    const receiver = await startWebhookReceiver();
    const services: ServiceProcess[] = [];
    try {
      const common = { PETSTORE_DATABASE: path, PETSTORE_API_KEYS: KEY, PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://petstore.test/v1', ...FAST_WEBHOOKS };
      const leaseHolder = async (id: string) => {
        const store = await openSqlPetStore({ kind: 'sqlite', path }, { migrate: false });
        try {
          return (await store.db.selectFrom('webhooks').select('lease_holder').where('id', '=', id).executeTakeFirstOrThrow()).lease_holder ?? '';
        } finally {
          await store.close();
        }
      };
      await checkTakeoverOnKill(common, leaseHolder, receiver, seed, (environment) => {
        const service = startServiceProcess(environment);
        services.push(service);
        return service;
      });
    } finally {
      for (const service of services) service.cleanup();
      await receiver.close();
      directory.remove();
    }
  });
});
