import assert from 'node:assert/strict';
import type { WebhookSubscriptions } from '../../application/index.ts';
import { REVOKED_KEY_ERROR } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { openEventStream } from './event-stream-reader.ts';
import { TEST_API_KEY } from './test-service.ts';
import type { TestService } from './test-service.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';

/** How soon a revoked key's streams and subscriptions must stop, wherever it was revoked. */
export const REVOKED_KEY_STOPS_WITHIN_MS = 5_000;

/** What the scenario needs beside the running instances: a way to revoke and to read subscriptions from elsewhere (the CLI's own connection). */
export interface Elsewhere {
  revoke(keyId: number): Promise<boolean>;
  readonly subscriptions: WebhookSubscriptions;
}

/**
 * A key (made on the first instance) opens an event stream on every instance and a webhook subscription
 * on the first; both carry events. Revoked elsewhere, the stream ends and the subscription is disabled,
 * saying why, within `REVOKED_KEY_STOPS_WITHIN_MS`; events committed after that reach the stream and the
 * subscription of another key but not the revoked one's receiver.
 */
export async function checkRevokedKeyStops(instances: readonly TestService[], elsewhere: Elsewhere): Promise<void> {
  const first = instances[0]!;
  const last = instances.at(-1)!;
  const { id: keyId, key } = await first.service.apiKeys.create('a tenant', new Date());
  const revokedReceiver = await startWebhookReceiver();
  const otherReceiver = await startWebhookReceiver();
  const subscribe = async (receiver: typeof revokedReceiver, withKey: string) => {
    const created = await first.request('/v1/webhooks', {
      key: withKey, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { id, secret } = (await created.json()) as { id: string; secret: string };
    receiver.secret = secret;
    return id;
  };
  const revokedSubscription = await subscribe(revokedReceiver, key);
  await subscribe(otherReceiver, TEST_API_KEY);
  // One on every instance: each must learn of the revocation (and all of them ending says they all have).
  const streams = await Promise.all(instances.map((instance) => openEventStream(`${instance.baseUrl}/events`, { authorization: `Bearer ${key}` })));
  const otherStream = await openEventStream(`${last.baseUrl}/events`, { authorization: `Bearer ${TEST_API_KEY}` });
  try {
    for (const stream of streams) assert.equal(stream.response.status, 200);
    const created = await first.createPet({ name: 'Before', categoryId: 1 });
    assert.equal(created.status, 201);
    const before = Number((await streams[0]!.nextEvent()).id);
    await revokedReceiver.waitFor((received) => received.some((event) => event.position === before));

    assert.equal(await elsewhere.revoke(keyId), true);
    const revokedAt = performance.now();
    const stored = await elsewhere.subscriptions.get(revokedSubscription);
    assert.equal(stored?.status, 'disabled', 'disabled with the revocation');
    assert.equal(stored?.lastError, REVOKED_KEY_ERROR);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`a revoked key's stream was still open ${REVOKED_KEY_STOPS_WITHIN_MS} ms after the revocation`)), REVOKED_KEY_STOPS_WITHIN_MS);
    });
    try {
      await Promise.race([Promise.all(streams.map((stream) => stream.ended())), late]);
    } finally {
      clearTimeout(timer);
    }
    assert.ok(performance.now() - revokedAt < REVOKED_KEY_STOPS_WITHIN_MS);

    // After: another key's stream and subscription get the new events; the revoked key's receiver does not.
    const afterCreated = await first.createPet({ name: 'After', categoryId: 1 });
    assert.equal(afterCreated.status, 201);
    let after = 0;
    for (let message = await otherStream.nextEvent(); ; message = await otherStream.nextEvent()) {
      after = Number(message.id);
      if (JSON.parse(message.data).data.name === 'After') break;
    }
    await otherReceiver.waitFor((received) => received.some((event) => event.position === after));
    assert.deepEqual(revokedReceiver.acknowledged.filter((event) => event.position > before).map((event) => event.position), [], 'delivered after the revocation');
    const again = await elsewhere.subscriptions.get(revokedSubscription);
    assert.equal(again?.status, 'disabled');
    assert.ok(again!.position <= before, 'its position did not move past the revocation');
    assert.equal((await last.request('/v1/events', { key })).status, 401);
  } finally {
    for (const stream of streams) stream.close();
    otherStream.close();
    await revokedReceiver.close();
    await otherReceiver.close();
  }
}
