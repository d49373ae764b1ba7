import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { createPetStoreClient, PetStoreError } from 'petstore/client';
import type { PetStoreClient, Webhook as Subscription } from 'petstore/client';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import type { WebhookReceiver } from '../support/webhook-receiver.ts';

describe('client webhook methods against the service: attempts, replay, rotateWebhookSecret', () => {
  let api: TestService;
  let client: PetStoreClient;
  let receiver: WebhookReceiver;
  let id: string;

  before(async () => {
    receiver = await startWebhookReceiver();
    api = await startTestService({ PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true', PETSTORE_WEBHOOK_LEASE_MS: '2000' });
    client = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
    const created = (await (await api.request('/v1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url }) })).json()) as {
      id: string; secret: string;
    };
    id = created.id;
    receiver.secret = created.secret;
  });
  after(async () => {
    await api.stop();
    await receiver.close();
  });

  it('pages the attempt log newest first, replays from a position and rotates the secret', async () => {
    await client.createPet({ name: 'Rex', categoryId: 1 });
    await client.createPet({ name: 'Fido', categoryId: 1 });
    await receiver.waitFor((received) => received.length >= 2, 10_000);
    const [first, second] = receiver.acknowledged;
    let attempts = await client.webhookAttempts(id);
    // The attempt log is written behind delivery: ask again until it holds both.
    for (let tries = 0; attempts.length < 2 && tries < 500; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      attempts = await client.webhookAttempts(id);
    }
    assert.deepEqual(attempts.map((attempt) => attempt.messageId), [second!.webhookId, first!.webhookId]);
    const page = await client.webhookAttempts(id, { limit: 1, before: attempts[0]!.id });
    assert.deepEqual(page, [attempts[1]]);

    const replaying = await client.replayWebhook(id, first!.position);
    assert.equal(replaying.id, id);
    await receiver.waitFor((received) => received.length >= 3, 10_000);
    assert.deepEqual([receiver.acknowledged[2]!.webhookId, receiver.acknowledged[2]!.body], [second!.webhookId, second!.body]);

    const { secret } = await client.rotateWebhookSecret(id);
    const previous = receiver.secret!;
    receiver.secret = secret;
    await client.createPet({ name: 'Bella', categoryId: 1 });
    await receiver.waitFor((received) => received.length >= 4, 10_000);
    const { body, headers } = receiver.acknowledged[3]!;
    assert.doesNotThrow(() => new Webhook(previous).verify(body, headers));
    assert.doesNotThrow(() => new Webhook(secret).verify(body, headers));
  });

  it('throws the service\'s error for a replay past the log\'s end and for an unknown subscription', async () => {
    const past = await client.replayWebhook(id, 1_000_000).then(() => undefined, (error: unknown) => error);
    assert.ok(past instanceof PetStoreError);
    assert.deepEqual([past.status, past.code], [400, 'invalid_body']);
    const unknown = await client.rotateWebhookSecret('wh_none').then(() => undefined, (error: unknown) => error);
    assert.ok(unknown instanceof PetStoreError);
    assert.deepEqual([unknown.status, unknown.code], [404, 'not_found']);
  });

  it('resumes a disabled subscription, and types its status and maxPerSecond', async () => {
    // A receiver that is gone: its 410 disables the subscription, as the service does for any receiver.
    const gone = createServer((_request, response) => response.writeHead(410).end());
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    try {
      const created = (await (await api.request('/v1/webhooks', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${(gone.address() as AddressInfo).port}/gone`, maxPerSecond: 5 }),
      })).json()) as { id: string };
      await client.createPet({ name: 'Unheard', categoryId: 1 });
      const disabled: Subscription['status'] = 'disabled';
      let status = '';
      for (let tries = 0; status !== disabled && tries < 500; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        status = ((await (await api.request(`/v1/webhooks/${created.id}`)).json()) as { status: string }).status;
      }
      assert.equal(status, disabled);
      const resumed: Subscription = await client.resumeWebhook(created.id);
      assert.deepEqual([resumed.status, resumed.maxPerSecond], ['active', 5]);
    } finally {
      gone.closeAllConnections();
      await new Promise((resolve) => gone.close(resolve));
    }
  });
});
