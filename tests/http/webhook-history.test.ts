import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import { distinctDeliveries, startWebhookReceiver } from '../support/webhook-receiver.ts';
import type { WebhookReceiver } from '../support/webhook-receiver.ts';
import { fastRetries } from '../support/webhook-load.ts';

const OTHER_KEY = 'other-key-0123456789abcdef';
const JSON_HEADERS = { 'content-type': 'application/json' };
const FAST_WEBHOOKS = {
  PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true',
  PETSTORE_WEBHOOK_RETRY_SCHEDULE: fastRetries(20, 200),
  PETSTORE_WEBHOOK_TIMEOUT_MS: '2000',
  PETSTORE_WEBHOOK_LEASE_MS: '2000',
};

interface Attempt {
  id: number;
  attemptedAt: string;
  messageId: string;
  positions: number[];
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
}

async function subscribe(api: TestService, receiver: WebhookReceiver, body: Record<string, unknown> = {}): Promise<string> {
  const response = await api.request('/v1/webhooks', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ url: receiver.url, ...body }) });
  assert.equal(response.status, 201);
  const { id, secret } = (await response.json()) as { id: string; secret: string };
  receiver.secret = secret;
  return id;
}

async function addPets(api: TestService, count: number): Promise<void> {
  for (let index = 0; index < count; index++) assert.equal((await api.createPet({ name: `pet ${index}`, categoryId: 1 })).status, 201);
}

/** Asks again until `found` holds of the answer: the attempt log is written behind delivery. */
async function until<T>(ask: () => Promise<T>, found: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await ask();
    if (found(value)) return value;
    assert.ok(Date.now() < deadline, `not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function replay(api: TestService, id: string, body: unknown, key = TEST_API_KEY): Promise<Response> {
  return api.request(`/v1/webhooks/${id}/replay`, { method: 'POST', headers: JSON_HEADERS, body: typeof body === 'string' ? body : JSON.stringify(body), key });
}

describe('webhook attempt log, replay and secret rotation over HTTP', () => {
  let api: TestService;

  before(async () => {
    api = await startTestService({ PETSTORE_API_KEYS: `${TEST_API_KEY},${OTHER_KEY}`, ...FAST_WEBHOOKS });
  });
  after(() => api.stop());

  it('lists each attempt newest first with its webhook-id, positions, status, duration and error, paged with Link rel="next"', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.faultFor = (request) => (request === 1 ? 'status-503' : 'none');
      const id = await subscribe(api, receiver);
      await addPets(api, 3);
      await receiver.waitFor((received) => received.length >= 3, 10_000);
      const positions = receiver.acknowledged.map((received) => received.position);
      const attempts = await until(async () => (await (await api.request(`/v1/webhooks/${id}/attempts`)).json()) as Attempt[], (listed) => listed.length >= 4);
      assert.deepEqual(attempts.map((attempt) => attempt.positions), [[positions[2]], [positions[1]], [positions[0]], [positions[0]]], 'newest first');
      assert.deepEqual(attempts.map((attempt) => attempt.messageId), [positions[2], positions[1], positions[0], positions[0]].map((position) => `msg_${id}_${position}`));
      assert.deepEqual(attempts.map((attempt) => attempt.responseStatus), [204, 204, 204, 503]);
      assert.deepEqual(attempts.map((attempt) => attempt.error), [null, null, null, 'answered 503: try later']);
      for (const attempt of attempts) {
        assert.ok(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0);
        assert.equal(new Date(attempt.attemptedAt).toISOString(), attempt.attemptedAt, 'RFC 3339');
      }
      assert.deepEqual([...attempts].sort((a, b) => b.id - a.id), attempts);

      const first = await api.request(`/v1/webhooks/${id}/attempts?limit=3`);
      assert.deepEqual(await first.json(), attempts.slice(0, 3));
      const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '');
      assert.ok(next, `Link: ${first.headers.get('link')}`);
      assert.equal(next[1], `${api.baseUrl}/webhooks/${id}/attempts?limit=3&before=${attempts[2]!.id}`);
      const second = await api.request(next[1]!.slice(api.origin.length));
      assert.deepEqual(await second.json(), attempts.slice(3));
      assert.equal(second.headers.get('link'), null, 'no page after the last');
    } finally {
      await receiver.close();
    }
  });

  it('refuses a bad limit or before with 400 and another key\'s subscription with 404', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const id = await subscribe(api, receiver);
      for (const query of ['limit=0', 'limit=101', 'limit=1.5', 'before=0', 'before=x', 'limit=2&limit=3']) {
        const response = await api.request(`/v1/webhooks/${id}/attempts?${query}`);
        assert.equal(response.status, 400, query);
        assert.equal((await readError(response)).code, 'invalid_query');
      }
      assert.equal((await api.request(`/v1/webhooks/${id}/attempts`, { key: OTHER_KEY })).status, 404);
      assert.deepEqual(await (await api.request(`/v1/webhooks/${id}/attempts`)).json(), []);
    } finally {
      await receiver.close();
    }
  });

  it('replays every matching event after a position with the same webhook-ids and bodies, in order, then carries on live', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const id = await subscribe(api, receiver, { types: [CLOUD_EVENT_TYPES.PetAdded] });
      await addPets(api, 3);
      await receiver.waitFor((received) => received.length >= 3, 10_000);
      const firstTime = receiver.acknowledged.slice(0, 3);
      const response = await replay(api, id, { after: firstTime[0]!.position });
      assert.equal(response.status, 202);
      assert.equal(((await response.json()) as { status: string }).status, 'active');
      await receiver.waitFor((received) => received.length >= 5, 10_000);
      const again = receiver.acknowledged.slice(3, 5);
      assert.deepEqual(again.map(({ webhookId, body }) => ({ webhookId, body })), firstTime.slice(1).map(({ webhookId, body }) => ({ webhookId, body })));
      await addPets(api, 1);
      await receiver.waitFor((received) => received.length >= 6, 10_000);
      const { positions, idMismatches } = distinctDeliveries(receiver.acknowledged);
      assert.deepEqual(idMismatches, []);
      assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
      assert.equal(positions.length, 4, 'the new event follows once');
      assert.deepEqual(receiver.badSignatures, []);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a replay past the end of the log, or with an after that is not a position, with 400; another key\'s with 404', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const id = await subscribe(api, receiver);
      await addPets(api, 1);
      const end = Number((await api.createPet({ name: 'last', categoryId: 1 })).headers.get('petstore-position'));
      assert.ok(end > 0);
      const past = await replay(api, id, { after: end + 1 });
      assert.equal(past.status, 400);
      const error = await readError(past);
      assert.equal(error.code, 'invalid_body');
      assert.match(error.message, /past the end of the log/);
      for (const body of [{}, { after: -1 }, { after: '1' }, { after: null }, { after: 1, from: 2 }, '{"after": 1.0000000000000001}', '{"after": 1.5}', '[]']) {
        const response = await replay(api, id, body);
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.equal((await readError(response)).code, 'invalid_body', JSON.stringify(body));
      }
      assert.equal((await replay(api, id, { after: 0 }, OTHER_KEY)).status, 404);
      assert.equal((await replay(api, 'wh_none', { after: 0 })).status, 404);
      assert.equal((await replay(api, id, { after: end })).status, 202, 'the end itself: nothing to send again');
    } finally {
      await receiver.close();
    }
  });

  it('rotates the secret once: until the overlap ends each delivery carries both signatures, and a receiver knowing either verifies it', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const id = await subscribe(api, receiver);
      const oldSecret = receiver.secret!;
      await addPets(api, 1);
      await receiver.waitFor((received) => received.length >= 1, 10_000);
      const rotatedAt = Date.now();
      const response = await api.request(`/v1/webhooks/${id}/rotate-secret`, { method: 'POST' });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const { secret, previousSecretExpiresAt } = (await response.json()) as { secret: string; previousSecretExpiresAt: string };
      assert.match(secret, /^whsec_/);
      assert.notEqual(secret, oldSecret);
      assert.ok(Math.abs(Date.parse(previousSecretExpiresAt) - rotatedAt - 24 * 3_600_000) < 60_000, `default overlap 24 h: ${previousSecretExpiresAt}`);
      receiver.secret = secret;
      await addPets(api, 1);
      await receiver.waitFor((received) => received.length >= 2, 10_000);
      const { body, headers } = receiver.acknowledged[1]!;
      assert.equal(headers['webhook-signature']!.split(' ').length, 2);
      assert.doesNotThrow(() => new Webhook(secret).verify(body, headers));
      assert.doesNotThrow(() => new Webhook(oldSecret).verify(body, headers));
      assert.deepEqual(receiver.badSignatures, []);
      assert.equal((await api.request(`/v1/webhooks/${id}/rotate-secret`, { method: 'POST', key: OTHER_KEY })).status, 404);
    } finally {
      await receiver.close();
    }
  });
});

describe('webhook secret rotation once the overlap is over', () => {
  it('signs with the new secret alone: the replaced one no longer verifies', async () => {
    const receiver = await startWebhookReceiver();
    const api = await startTestService({ ...FAST_WEBHOOKS, PETSTORE_WEBHOOK_SECRET_OVERLAP_MS: '1' });
    try {
      const id = await subscribe(api, receiver);
      const oldSecret = receiver.secret!;
      const { secret } = (await (await api.request(`/v1/webhooks/${id}/rotate-secret`, { method: 'POST' })).json()) as { secret: string };
      receiver.secret = secret;
      await addPets(api, 1);
      await receiver.waitFor((received) => received.length >= 1, 10_000);
      const { body, headers } = receiver.acknowledged[0]!;
      assert.equal(headers['webhook-signature']!.split(' ').length, 1);
      assert.doesNotThrow(() => new Webhook(secret).verify(body, headers));
      assert.throws(() => new Webhook(oldSecret).verify(body, headers));
    } finally {
      await api.stop();
      await receiver.close();
    }
  });
});
