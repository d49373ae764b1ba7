import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { temporaryDirectory } from './support/temporary-store.ts';
import { distinctDeliveries, startWebhookReceiver } from './support/webhook-receiver.ts';
import { freePort } from '../scripts/free-port.ts';
import { FAST_WEBHOOKS, WEBHOOK_TEST_KEY as KEY } from './support/webhook-load.ts';

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

describe('webhook replay across a restart of the service', () => {
  it('a replay asked for before a SIGKILL is delivered after the restart, with the first time\'s webhook-ids and bodies, then new events follow', { timeout: 180_000 }, async () => {
    const directory = temporaryDirectory('webhook-replay-restart');
    // The same port after the restart: each event's `source`, so each body, stays the same.
    const environment = { PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY, PORT: String(await freePort()), ...FAST_WEBHOOKS };
    const receiver = await startWebhookReceiver();
    const services: ServiceProcess[] = [];
    try {
      services.push(startServiceProcess(environment));
      let base = await services[0]!.listening;
      const created = await fetch(`${base}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url }) });
      assert.equal(created.status, 201);
      const { id, secret } = (await created.json()) as { id: string; secret: string };
      receiver.secret = secret;
      for (let index = 0; index < 5; index++) {
        assert.equal((await fetch(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: `pet ${index}`, categoryId: 1 }) })).status, 201);
      }
      await receiver.waitFor((received) => received.length >= 5, 60_000);
      const firstTime = receiver.acknowledged.slice(0, 5).map(({ webhookId, body, position }) => ({ webhookId, body, position }));

      // Nothing of the replay can be acknowledged before the kill: the receiver is away.
      await receiver.stop();
      const replayed = await fetch(`${base}/webhooks/${id}/replay`, { method: 'POST', headers, body: JSON.stringify({ after: firstTime[1]!.position }) });
      assert.equal(replayed.status, 202);
      services[0]!.signal('SIGKILL');
      await services[0]!.exited;

      services.push(startServiceProcess(environment));
      base = await services[1]!.listening;
      await receiver.start();
      await receiver.waitFor((received) => received.length >= 8, 60_000);
      assert.deepEqual(
        receiver.acknowledged.slice(5, 8).map(({ webhookId, body, position }) => ({ webhookId, body, position })),
        firstTime.slice(2),
        'the events after the position again, in order, each with its first webhook-id and body',
      );
      assert.equal((await fetch(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'new', categoryId: 1 }) })).status, 201);
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= 6, 60_000);
      const { positions, idMismatches } = distinctDeliveries(receiver.acknowledged);
      assert.deepEqual(idMismatches, []);
      assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
      assert.deepEqual(receiver.badSignatures, []);
    } finally {
      for (const service of services) service.cleanup();
      await receiver.close();
      directory.remove();
    }
  });
});
