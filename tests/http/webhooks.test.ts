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
const ADDED = CLOUD_EVENT_TYPES.PetAdded;
const CHANGED = CLOUD_EVENT_TYPES.PetStatusChanged;
const JSON_HEADERS = { 'content-type': 'application/json' };

async function subscribe(api: TestService, body: unknown, key = TEST_API_KEY): Promise<Response> {
  return api.request('/v1/webhooks', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body), key });
}

describe('webhook subscriptions: the resource', () => {
  let api: TestService;

  before(async () => {
    api = await startTestService({ PETSTORE_API_KEYS: `${TEST_API_KEY},${OTHER_KEY}` });
  });
  after(() => api.stop());

  it('refuses loopback, private, link-local, unspecified and multicast targets, and names resolving to them, with a 4xx Error body', async () => {
    for (const url of [
      'http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://10.1.2.3/hook', 'http://192.168.1.1/hook', 'http://172.20.0.1/hook',
      'http://169.254.169.254/latest/meta-data', 'http://0.0.0.0/hook', 'http://224.0.0.1/hook', 'http://[::1]/hook', 'http://[fe80::1]/hook',
      'http://[fd00::1]/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://100.64.0.1/hook',
      // IPv6 forms that carry a loopback or internal IPv4 address, and IPv6 special-purpose ranges.
      'http://[::127.0.0.1]/', 'http://[::7f00:1]/', 'http://[::ffff:0:127.0.0.1]/', 'http://[64:ff9b:1::7f00:1]/', 'http://[2002:7f00:1::]/',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'http://[100::1]/',
    ]) {
      const response = await subscribe(api, { url });
      const error = await readError(response);
      assert.equal(response.status, 400, url);
      assert.equal(error.code, 'invalid_body');
      assert.match(error.message, /public address/, url);
      assert.match(error.message, /PETSTORE_WEBHOOKS_ALLOW_PRIVATE=true/, url);
    }
    for (const url of ['ftp://example.com/hook', 'not a url', 'http://user:pass@example.com/hook']) {
      const response = await subscribe(api, { url });
      assert.equal(response.status, 400, url);
      assert.equal((await readError(response)).code, 'invalid_body');
    }
  });

  it('checks the body: url required, types among the feed\'s names, petId a pet id, nothing else', async () => {
    for (const body of [
      {}, { url: 'https://example.com/h', types: ['com.petstore.pet.nope.v1'] }, { url: 'https://example.com/h', petId: 0 }, { url: 'https://example.com/h', secret: 'x' },
      { url: 'https://example.com/h', batchSize: 0 }, { url: 'https://example.com/h', batchSize: 101 },
    ]) {
      const response = await subscribe(api, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal((await readError(response)).code, 'invalid_body');
    }
  });

  it('creates with 201, id and a Standard Webhooks secret shown once; lists, gets and deletes for the owner only', async () => {
    const response = await subscribe(api, { url: 'https://93.184.215.14/hooks/pets', types: [CHANGED], petId: 7 });
    assert.equal(response.status, 201);
    const created = (await response.json()) as Record<string, any>;
    assert.match(created.id, /^wh_/);
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const secretBytes = Buffer.from(created.secret.slice('whsec_'.length), 'base64');
    assert.ok(secretBytes.length >= 24 && secretBytes.length <= 64, `${secretBytes.length} bytes`);
    // The library accepts it as a secret.
    assert.doesNotThrow(() => new Webhook(created.secret));
    assert.equal(response.headers.get('location'), `${api.baseUrl}/webhooks/${created.id}`);
    assert.deepEqual({ ...created, secret: undefined, createdAt: undefined }, {
      id: created.id, url: 'https://93.184.215.14/hooks/pets', types: [CHANGED], petId: 7, batchSize: 1, status: 'active', secret: undefined, createdAt: undefined,
    });

    const one = (await (await api.request(`/v1/webhooks/${created.id}`)).json()) as Record<string, unknown>;
    assert.equal(one.secret, undefined, 'the secret is never shown again');
    assert.equal(one.id, created.id);
    const listed = (await (await api.request('/v1/webhooks')).json()) as Record<string, unknown>[];
    assert.ok(listed.some((item) => item.id === created.id));
    assert.ok(listed.every((item) => item.secret === undefined));

    // Another key sees nothing of it.
    assert.deepEqual(await (await api.request('/v1/webhooks', { key: OTHER_KEY })).json(), []);
    for (const [method, path] of [['GET', ''], ['DELETE', ''], ['POST', '/resume'], ['GET', '/deliveries']] as const) {
      const response = await api.request(`/v1/webhooks/${created.id}${path}`, { method, key: OTHER_KEY });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal((await readError(response)).code, 'not_found');
    }

    const deliveries = (await (await api.request(`/v1/webhooks/${created.id}/deliveries`)).json()) as Record<string, unknown>;
    assert.equal(deliveries.status, 'active');
    assert.equal(deliveries.attempts, 0);

    assert.equal((await api.request(`/v1/webhooks/${created.id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await api.request(`/v1/webhooks/${created.id}`)).status, 404);
    assert.equal((await api.request('/v1/webhooks/wh_unknown')).status, 404);
  });

  it('refuses a key one subscription more than PETSTORE_WEBHOOKS_MAX_PER_KEY with 409 limit_reached; other keys are not counted', async () => {
    const capped = await startTestService({ PETSTORE_API_KEYS: `${TEST_API_KEY},${OTHER_KEY}`, PETSTORE_WEBHOOKS_MAX_PER_KEY: '3' });
    try {
      const ids: string[] = [];
      for (let index = 0; index < 3; index++) {
        const response = await subscribe(capped, { url: `https://93.184.215.14/hook/${index}` });
        assert.equal(response.status, 201);
        ids.push(((await response.json()) as { id: string }).id);
      }
      const refused = await subscribe(capped, { url: 'https://93.184.215.14/hook/3' });
      assert.equal(refused.status, 409);
      const error = await readError(refused);
      assert.equal(error.code, 'limit_reached');
      assert.match(error.message, /3 webhook subscriptions/);
      assert.equal(((await (await capped.request('/v1/webhooks')).json()) as unknown[]).length, 3, 'nothing was created');
      assert.equal((await subscribe(capped, { url: 'https://93.184.215.14/hook/other' }, OTHER_KEY)).status, 201);
      assert.equal((await capped.request(`/v1/webhooks/${ids[0]}`, { method: 'DELETE' })).status, 204);
      assert.equal((await subscribe(capped, { url: 'https://93.184.215.14/hook/4' })).status, 201, 'a deleted one frees its place');
    } finally {
      await capped.stop();
    }
  });

  it('needs a key', async () => {
    assert.equal((await api.request('/v1/webhooks', { key: null })).status, 401);
  });
});

describe('webhook delivery: signed, ordered, retried', () => {
  let api: TestService;
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await startWebhookReceiver();
    api = await startTestService({
      PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true',
      PETSTORE_WEBHOOK_RETRY_SCHEDULE: fastRetries(20, 200),
      PETSTORE_WEBHOOK_TIMEOUT_MS: '500',
      PETSTORE_WEBHOOK_LEASE_MS: '2000',
    });
  });
  after(async () => {
    await api.stop();
    await receiver.close();
  });

  it('allows a loopback target with PETSTORE_WEBHOOKS_ALLOW_PRIVATE=true, and delivers each event of its types, signed, in order', async () => {
    const response = await subscribe(api, { url: receiver.url, types: [ADDED] });
    assert.equal(response.status, 201);
    const { id, secret } = (await response.json()) as { id: string; secret: string };
    receiver.secret = secret;
    const pets: number[] = [];
    for (let index = 0; index < 5; index++) pets.push(((await (await api.createPet({ name: `dog ${index}`, categoryId: 1 })).json()) as { id: number }).id);
    await api.request(`/v1/pets/${pets[0]}`, { method: 'PATCH', headers: JSON_HEADERS, body: '{"status":"sold"}' });
    await receiver.waitFor((received) => received.length >= 5, 10_000);
    assert.deepEqual(receiver.badSignatures, []);
    assert.deepEqual(receiver.acknowledged.map((received) => received.type), Array(5).fill(ADDED));
    assert.deepEqual(receiver.acknowledged.map((received) => received.event.data.id), pets);
    const positions = receiver.acknowledged.map((received) => received.position);
    assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
    assert.equal(receiver.acknowledged[0]!.webhookId, `msg_${id}_${positions[0]}`);
    // The body is the feed's own form of the event.
    const feed = (await (await api.request(`/v1/events?after=${positions[0]! - 1}&limit=1`)).json()) as unknown[];
    assert.deepEqual(receiver.acknowledged[0]!.event, feed[0]);
  });

  it('retries failures (5xx, closed connections, timeouts) with the same webhook-id and body, and catches up once the receiver is back', async () => {
    const faulty = await startWebhookReceiver();
    try {
      const { id, secret } = (await (await subscribe(api, { url: faulty.url })).json()) as { id: string; secret: string };
      faulty.secret = secret;
      const faults = ['status-500', 'close', 'timeout', 'status-503'] as const;
      faulty.faultFor = (request) => (request <= faults.length ? faults[request - 1]! : 'none');
      await api.createPet({ name: 'cat', categoryId: 2 });
      await faulty.waitFor((received) => received.length >= 1, 20_000);
      assert.equal(faulty.faulted, 4);
      const first = faulty.acknowledged[0]!;
      assert.equal(first.webhookId, `msg_${id}_${first.position}`);

      // Stopped for a while: the events wait, then arrive in order.
      await faulty.stop();
      for (let index = 0; index < 3; index++) await api.createPet({ name: `cat ${index}`, categoryId: 2 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const waiting = (await (await api.request(`/v1/webhooks/${id}/deliveries`)).json()) as Record<string, any>;
      assert.ok(waiting.attempts >= 1, JSON.stringify(waiting));
      assert.match(waiting.lastError, /request failed|no answer/);
      assert.ok(waiting.nextTryAt !== null);
      await faulty.start();
      await faulty.waitFor((received) => distinctDeliveries(received).positions.length >= 4, 20_000);
      const { positions, idMismatches } = distinctDeliveries(faulty.acknowledged);
      assert.deepEqual(idMismatches, []);
      assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
      assert.deepEqual(faulty.badSignatures, []);
      // The position is stored just after the receiver's answer.
      let caughtUp: Record<string, any> = {};
      for (let tries = 0; tries < 100 && caughtUp.position !== positions.at(-1); tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        caughtUp = (await (await api.request(`/v1/webhooks/${id}/deliveries`)).json()) as Record<string, any>;
      }
      assert.equal(caughtUp.position, positions.at(-1));
      assert.equal(caughtUp.attempts, 0);
    } finally {
      await faulty.close();
    }
  });

  it('with batchSize, sends the events there are as one signed array, the same array on every attempt, all in order', async () => {
    const batched = await startWebhookReceiver();
    try {
      const response = await subscribe(api, { url: batched.url, types: [ADDED], batchSize: 10 });
      const { id, secret, batchSize } = (await response.json()) as { id: string; secret: string; batchSize: number };
      assert.equal(batchSize, 10);
      batched.secret = secret;
      // Refused until every pet is written: the first attempt holds one event, then the retries must repeat it exactly.
      let refusing = true;
      batched.faultFor = () => (refusing ? 'status-503' : 'none');
      const pets = await Promise.all(Array.from({ length: 25 }, async (_, index) => ((await (await api.createPet({ name: `ant ${index}`, categoryId: 4 })).json()) as { id: number }).id));
      await new Promise((resolve) => setTimeout(resolve, 100));
      refusing = false;
      await batched.waitFor((received) => distinctDeliveries(received).positions.length >= 25, 10_000);
      const { positions, idMismatches } = distinctDeliveries(batched.acknowledged);
      assert.deepEqual(idMismatches, []);
      assert.deepEqual(batched.badSignatures, []);
      assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
      assert.deepEqual(new Set(batched.acknowledged.map((received) => received.event.data.id)), new Set(pets));
      assert.ok(batched.batches.every((size) => size >= 1 && size <= 10), JSON.stringify(batched.batches));
      assert.ok(batched.batches.some((size) => size > 1), `some request carried several events: ${JSON.stringify(batched.batches)}`);
      const last = batched.acknowledged.at(-1)!;
      const carried = (JSON.parse(last.body) as { id: string }[]).map((event) => Number(event.id));
      assert.equal(last.webhookId, `msg_${id}_${carried[0]}_${last.position}`, 'named after the first and last events of its batch');
    } finally {
      await batched.close();
    }
  });

  it('marks a subscription failing once its retries run out, and resumes it from the event it stopped at', async () => {
    const down = await startWebhookReceiver();
    const failing = await startTestService({
      PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true', PETSTORE_WEBHOOK_RETRY_SCHEDULE: '10ms,20ms,20ms,20ms,20ms',
    });
    try {
      const { id, secret } = (await (await subscribe(failing, { url: down.url })).json()) as { id: string; secret: string };
      down.secret = secret;
      down.faultFor = () => 'status-500';
      await failing.createPet({ name: 'owl', categoryId: 3 });
      let state: Record<string, any> = {};
      for (let tries = 0; tries < 200 && state.status !== 'failing'; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        state = (await (await failing.request(`/v1/webhooks/${id}/deliveries`)).json()) as Record<string, any>;
      }
      assert.equal(state.status, 'failing');
      assert.equal(state.nextTryAt, null);
      assert.match(state.lastError, /answered 500: try later/);
      assert.equal(((await (await failing.request(`/v1/webhooks/${id}`)).json()) as Record<string, unknown>).status, 'failing');
      // An operator sees it in the metrics, by status only.
      const metrics = await (await failing.request('/metrics', { key: null })).text();
      assert.match(metrics, /^petstore_webhook_subscriptions\{status="failing"\} 1$/m);
      assert.match(metrics, /^petstore_webhook_subscriptions\{status="active"\} 0$/m);
      assert.match(metrics, /^petstore_webhook_subscriptions\{status="disabled"\} 0$/m);

      down.faultFor = () => 'none';
      const resumed = await failing.request(`/v1/webhooks/${id}/resume`, { method: 'POST' });
      assert.equal(resumed.status, 200);
      assert.equal(((await resumed.json()) as Record<string, unknown>).status, 'active');
      await down.waitFor((received) => received.length >= 1, 10_000);
      assert.equal(down.acknowledged[0]!.event.data.name, 'owl');
    } finally {
      await failing.stop();
      await down.close();
    }
  });
});
