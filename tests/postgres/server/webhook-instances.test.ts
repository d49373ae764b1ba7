import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { CLOUD_EVENT_TYPES } from '../../../contract/event-feed.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { seedFrom } from '../../support/seeded-random.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';
import { distinctDeliveries, startWebhookReceiver } from '../../support/webhook-receiver.ts';
import { assertDeliveredInOrder, failingAtRandom, FAST_WEBHOOKS, feedPositions, freePort, WEBHOOK_TEST_KEY as KEY, writeWhile } from '../../support/webhook-load.ts';
const ADDED = CLOUD_EVENT_TYPES.PetAdded;

describe('webhooks on PostgreSQL with two instances', () => {
  it('one instance at a time delivers a subscription; when it is killed the other takes over, and every event arrives in order', { timeout: 180_000 }, async () => {
    const seed = seedFrom('WEBHOOK_SEED');
    const database = await createTestDatabase();
    const receiver = await startWebhookReceiver();
    const services: ServiceProcess[] = [];
    const client = new pg.Client({ connectionString: database.url });
    try {
      // One public address for both (the same `source` in every body), as behind a load balancer.
      const common = { PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: KEY, PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://petstore.test/v1', ...FAST_WEBHOOKS };
      services.push(startServiceProcess({ ...common, PORT: String(await freePort()) }));
      const bases = [await services[0]!.listening];
      services.push(startServiceProcess({ ...common, PORT: String(await freePort()) }));
      bases.push(await services[1]!.listening);
      // Where each listens (the public base is only each event's `source`).
      const local = bases;
      await client.connect();

      const created = await fetch(`${local[0]}/webhooks`, {
        method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url, types: [ADDED] }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const { id, secret } = (await created.json()) as { id: string; secret: string };
      receiver.secret = secret;

      // Both instances write; the receiver answers every request: any duplicate would be a second deliverer.
      let writing = true;
      const writers = local.map((base) => writeWhile(base, () => writing));
      await receiver.waitFor((received) => received.length >= 30, 60_000);
      assert.deepEqual(distinctDeliveries(receiver.acknowledged).positions, receiver.acknowledged.map((received) => received.position), 'one deliverer: no event twice, in order');

      // Kill the instance that holds the lease; the other takes over once it runs out.
      const { rows } = await client.query<{ lease_holder: string }>('select lease_holder from webhooks where id = $1', [id]);
      const holderPid = Number(rows[0]!.lease_holder.split('-')[0]);
      const holder = services.findIndex((service) => service.child.pid === holderPid);
      assert.ok(holder >= 0, `the lease holder ${rows[0]!.lease_holder} is one of the instances`);
      failingAtRandom(receiver, seed);
      services[holder]!.signal('SIGKILL');
      await services[holder]!.exited;
      const survivor = local[1 - holder]!;
      const before = distinctDeliveries(receiver.acknowledged).positions.length;
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= before + 20, 60_000);
      writing = false;
      await Promise.all(writers);

      const expected = await feedPositions(survivor, ADDED);
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= expected.length, 60_000);
      assertDeliveredInOrder(receiver, expected, seed);
      const after = await client.query<{ lease_holder: string }>('select lease_holder from webhooks where id = $1', [id]);
      assert.equal(Number(after.rows[0]!.lease_holder.split('-')[0]), services[1 - holder]!.child.pid, 'the survivor holds the lease now');
    } finally {
      for (const service of services) service.cleanup();
      await client.end().catch(() => undefined);
      await receiver.close();
      await database.drop();
    }
  });
});
