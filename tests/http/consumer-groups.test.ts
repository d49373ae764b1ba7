import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import { GROUP_LIMITS } from '../../application/index.ts';

const OTHER_KEY = 'other-key-0123456789abcdef';

type Claims = { claims: { lease: string; position: number; deliveries: number; leaseExpiresAt: string; event: { id: string; type: string; subject: string } }[] };

describe('consumer groups over HTTP', () => {
  let api: TestService;
  const send = (method: string, path: string, body?: unknown, key: string = TEST_API_KEY) =>
    api.request(`/v1/consumer-groups${path}`, {
      method, key, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  const claim = async (group: string, body: Record<string, unknown>) => {
    const response = await send('POST', `/${group}/claims`, body);
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as Claims).claims;
  };

  before(async () => {
    api = await startTestService({ PETSTORE_API_KEYS: `${TEST_API_KEY},${OTHER_KEY}` });
  });
  after(() => api.stop());

  it('creates a group with 201, finds it again with 200 on the same settings, and refuses other settings with 409 group_exists', async () => {
    const created = await send('PUT', '/orders', { ackTimeoutMs: 5000 });
    assert.equal(created.status, 201);
    const body = (await created.json()) as Record<string, unknown>;
    assert.deepEqual({ ...body, createdAt: undefined, head: undefined, lag: undefined, checkpoint: undefined }, {
      group: 'orders', checkpoint: undefined, head: undefined, lag: undefined, inFlight: 0, parked: 0, consumers: [], ackTimeoutMs: 5000, maxDeliveries: 5, start: 'beginning', createdAt: undefined,
    });
    assert.equal((await send('PUT', '/orders', { ackTimeoutMs: 5000, start: 'beginning', maxDeliveries: 5 })).status, 200);
    const refused = await send('PUT', '/orders', { ackTimeoutMs: 6000 });
    assert.equal(refused.status, 409);
    assert.equal((await readError(refused)).code, 'group_exists');
  });

  it('another key is told 404 for every operation on a group it does not own, and lists none', async () => {
    await send('PUT', '/mine', {});
    assert.deepEqual(await (await send('GET', '', undefined, OTHER_KEY)).json(), []);
    for (const [method, path, body] of [
      ['GET', '/mine'], ['DELETE', '/mine'], ['POST', '/mine/claims', { consumer: 'c' }], ['POST', '/mine/acks', { leases: ['x'] }],
      ['POST', '/mine/nacks', { leases: ['x'] }], ['POST', '/mine/extend', { leases: ['x'] }], ['GET', '/mine/parked'], ['POST', '/mine/parked/replay', {}],
    ] as const) {
      const response = await send(method, path, body, OTHER_KEY);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal((await readError(response)).code, 'not_found');
    }
  });

  it('refuses bad names and bodies with 400 naming what is wrong', async () => {
    assert.equal((await readError(await send('PUT', '/Upper', {}))).code, 'invalid_path');
    const cases: [string, unknown, RegExp][] = [
      ['/g', { ackTimeoutMs: 999 }, /ackTimeoutMs/],
      ['/g', '{"maxDeliveries": 1.0000000000000001}', /maxDeliveries/],
      // `start` is a position or a word: a position is read exactly as well.
      ['/g', '{"start": 1.0000000000000001}', /^start must be an integer/],
      ['/g', { typo: 1 }, /typo/],
      ['/g', { start: 10 ** 9 }, /past the end of the log/],
    ];
    for (const [path, body, message] of cases) {
      const response = await send('PUT', path, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.match((await readError(response)).message, message);
    }
    await send('PUT', '/g', {});
    assert.match((await readError(await send('POST', '/g/claims', {}))).message, /consumer is required/);
    assert.match((await readError(await send('POST', '/g/claims', { consumer: 'c', max: GROUP_LIMITS.claimMax + 1 }))).message, /max/);
    assert.match((await readError(await send('POST', '/g/acks', { leases: [] }))).message, /leases/);
  });

  it('hands events out under leases, acks them once, and the checkpoint reaches the head', async () => {
    await send('PUT', '/flow', { start: 'end' });
    for (let index = 0; index < 3; index++) assert.equal((await api.createPet({ name: `Flow ${index}`, categoryId: 1 })).status, 201);
    const claims = await claim('flow', { consumer: 'worker-1', max: 2 });
    assert.deepEqual(claims.map((entry) => [entry.deliveries, entry.event.type]), [[1, 'com.petstore.pet.added.v1'], [1, 'com.petstore.pet.added.v1']]);
    const state = (await (await send('GET', '/flow')).json()) as { checkpoint: number; head: number; lag: number; inFlight: number; consumers: { consumer: string; inFlight: number }[] };
    assert.deepEqual([state.inFlight, state.consumers.map((entry) => [entry.consumer, entry.inFlight]), state.lag], [2, [['worker-1', 2]], 3]);
    const acked = await send('POST', '/flow/acks', { leases: [claims[1]!.lease, 'unknown'] });
    assert.deepEqual(await acked.json(), { acked: 1, stale: ['unknown'] });
    assert.equal(((await (await send('GET', '/flow')).json()) as { checkpoint: number }).checkpoint, state.checkpoint, 'the first is still in flight');
    assert.deepEqual(await (await send('POST', '/flow/acks', { leases: [claims[1]!.lease] })).json(), { acked: 0, stale: [claims[1]!.lease] }, 'acking twice is stale');
    const rest = await claim('flow', { consumer: 'worker-2' });
    assert.equal(rest.length, 1);
    await send('POST', '/flow/acks', { leases: [claims[0]!.lease, rest[0]!.lease] });
    const settled = (await (await send('GET', '/flow')).json()) as { checkpoint: number; head: number; lag: number };
    assert.deepEqual([settled.checkpoint, settled.lag], [settled.head, 0]);
    const extended = await send('POST', '/flow/extend', { leases: [rest[0]!.lease] });
    assert.deepEqual(await extended.json(), { leases: [], stale: [rest[0]!.lease] });
  });

  it('a claim with waitMs wakes on the next commit and hands out its event', async () => {
    await send('PUT', '/waiting', { start: 'end' });
    const waiting = claim('waiting', { consumer: 'c', waitMs: 30_000 });
    // The claim found nothing and waits: the pet's commit is what wakes it, long before 30 s.
    await new Promise((resolve) => setImmediate(resolve));
    await api.createPet({ name: 'Awaited', categoryId: 1 });
    const claims = await waiting;
    assert.equal(claims.length, 1);
    assert.equal(claims[0]!.event.type, 'com.petstore.pet.added.v1');
  });

  it('a nacked event comes back; parked ones are read page by page with Link and replayed with 202', async () => {
    await send('PUT', '/poison', { start: 'end', maxDeliveries: 2 });
    for (let index = 0; index < 3; index++) await api.createPet({ name: `Poison ${index}`, categoryId: 1 });
    for (let delivery = 1; delivery <= 2; delivery++) {
      const claims = await claim('poison', { consumer: 'c' });
      assert.deepEqual(claims.map((entry) => entry.deliveries), [delivery, delivery, delivery]);
      assert.deepEqual(await (await send('POST', '/poison/nacks', { leases: claims.map((entry) => entry.lease) })).json(), { nacked: 3, stale: [] });
    }
    assert.deepEqual(await claim('poison', { consumer: 'c' }), [], 'parked after maxDeliveries');
    const first = await send('GET', '/poison/parked?limit=2');
    const page = (await first.json()) as { position: number; reason: string; deliveries: number }[];
    assert.deepEqual(page.map((entry) => [entry.deliveries, entry.reason]), [[2, 'nacked on delivery 2 of 2'], [2, 'nacked on delivery 2 of 2']]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')![1]!;
    const second = (await (await api.request(new URL(next).pathname + new URL(next).search)).json()) as unknown[];
    assert.equal(second.length, 1);
    assert.equal((await send('GET', '/poison/parked?limit=0')).status, 400);
    const replay = await send('POST', '/poison/parked/replay', {});
    assert.equal(replay.status, 202);
    assert.deepEqual(await replay.json(), { replayed: 3 });
    assert.deepEqual((await claim('poison', { consumer: 'c' })).map((entry) => entry.deliveries), [1, 1, 1]);
  });

  it('past the consumer\'s in-flight cap a claim is 429 too_many_in_flight with Retry-After, not an empty answer', async () => {
    await send('PUT', '/capped', { start: 'end' });
    const cap = GROUP_LIMITS.inFlightPerConsumer;
    for (let index = 0; index <= cap; index++) await api.createPet({ name: `Capped ${index}`, categoryId: 1 });
    assert.equal(GROUP_LIMITS.claimMax, cap, 'a full claim fills a consumer');
    const full = await claim('capped', { consumer: 'greedy', max: GROUP_LIMITS.claimMax });
    assert.equal(full.length, cap);
    const refused = await send('POST', '/capped/claims', { consumer: 'greedy' });
    assert.equal(refused.status, 429);
    assert.equal((await readError(refused)).code, 'too_many_in_flight');
    assert.equal(refused.headers.get('retry-after'), '30');
    assert.equal((await claim('capped', { consumer: 'other' })).length, 1, 'another consumer still gets the rest');
    const acking = await send('POST', '/capped/claims', { consumer: 'greedy', acks: full.map((entry) => entry.lease) });
    assert.equal(acking.status, 200, 'a full claim\'s leases fit one body');
    assert.equal(((await acking.json()) as { acked: number }).acked, cap);
  });

  it('a revoked key\'s group stops handing out: its consumers are refused with 401', async () => {
    const { id, key } = await api.service.apiKeys.create('revoked-worker', new Date());
    assert.equal((await send('PUT', '/revoked', { start: 'end' }, key)).status, 201);
    await api.createPet({ name: 'Unclaimed', categoryId: 1 });
    assert.equal(await api.service.apiKeys.revoke(id, new Date()), true);
    const refused = await send('POST', '/revoked/claims', { consumer: 'c' }, key);
    assert.equal(refused.status, 401);
  });

  it('a consumer\'s name follows the rule a pet\'s name follows: 64 code points (astral ones too), no control characters, not only white space', async () => {
    assert.equal((await send('PUT', '/named', { start: 'end' })).status, 201);
    const astral = '\u{1F436}'.repeat(64);
    const bidi = 'worker\u202Eevil';
    for (const consumer of [astral, bidi]) assert.equal((await send('POST', '/named/claims', { consumer })).status, 200, consumer);
    const shown = (await (await send('GET', '/named')).json()) as { consumers: { consumer: string }[] };
    assert.deepEqual(shown.consumers.map((entry) => entry.consumer).sort(), [astral, bidi].sort(), 'kept exactly as sent');
    for (const consumer of ['\u{1F436}'.repeat(65), 'a\u0000b', 'two\nlines', '   ', 'tab\there']) {
      const refused = await send('POST', '/named/claims', { consumer });
      assert.equal(refused.status, 400, JSON.stringify(consumer));
      assert.equal((await readError(refused)).code, 'invalid_body');
    }
    const badLease = await send('POST', '/named/acks', { leases: ['a\nb'] });
    assert.equal(badLease.status, 400);
    assert.match((await readError(badLease)).message, /leases\/0 must not contain control characters/);
  });

  it('a claim acks the leases it carries first, in the same request, and says what they came to', async () => {
    assert.equal((await send('PUT', '/batched', { start: 'end' })).status, 201);
    for (let index = 0; index < 3; index++) await api.createPet({ name: `Batched ${index}`, categoryId: 1 });
    const first = await claim('batched', { consumer: 'busy', max: 2 });
    const answer = await send('POST', '/batched/claims', { consumer: 'busy', max: 2, acks: [...first.map((entry) => entry.lease), 'unknown.1'] });
    assert.equal(answer.status, 200);
    const text = await answer.text();
    const body = JSON.parse(text) as Claims & { acked: number; stale: string[] };
    assert.deepEqual([body.acked, body.stale, body.claims.length], [2, ['unknown.1'], 1]);
    assert.equal(text, JSON.stringify(body), 'the answer is JSON.stringify of what it says, key for key');
    assert.deepEqual(Object.keys(body.claims[0]!), ['lease', 'position', 'deliveries', 'leaseExpiresAt', 'event']);
    const state = (await (await send('GET', '/batched')).json()) as { checkpoint: number; head: number; inFlight: number };
    assert.deepEqual([state.head - state.checkpoint, state.inFlight], [1, 1]);
  });

  it('refuses a group with an empty list of types with 400: it would take nothing', async () => {
    const refused = await send('PUT', '/takes-nothing', { types: [] });
    assert.equal(refused.status, 400);
    assert.equal((await readError(refused)).code, 'invalid_body');
  });

  it('deletes a group with 204, then 404; a key has a bounded number of groups (409 limit_reached)', async () => {
    assert.equal((await send('DELETE', '/orders')).status, 204);
    assert.equal((await send('GET', '/orders')).status, 404);
    const existing = ((await (await send('GET', '')).json()) as unknown[]).length;
    for (let index = existing; index < 20; index++) assert.equal((await send('PUT', `/bulk-${index}`, {})).status, 201);
    const refused = await send('PUT', '/one-too-many', {});
    assert.equal(refused.status, 409);
    assert.equal((await readError(refused)).code, 'limit_reached');
  });

  it('metrics give the groups\' events by state and the largest lag, as totals with no series a group', async () => {
    const own = await startTestService({ PETSTORE_METRICS: 'true' });
    try {
      const put = (group: string) => own.request(`/v1/consumer-groups/${group}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
      await put('one');
      await put('two');
      for (let index = 0; index < 4; index++) await own.createPet({ name: `Measured ${index}`, categoryId: 1 });
      const claimed = await own.request('/v1/consumer-groups/one/claims', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ consumer: 'c', max: 4 }) });
      const { claims } = (await claimed.json()) as Claims;
      await own.request('/v1/consumer-groups/one/nacks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ leases: [claims[0]!.lease], park: true }) });
      await own.request('/v1/consumer-groups/one/nacks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ leases: [claims[2]!.lease], retryAfterMs: 60_000 }) });
      await own.request('/v1/consumer-groups/one/acks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ leases: [claims[1]!.lease] }) });
      const metrics = await (await own.request('/metrics', { key: null })).text();
      assert.match(metrics, /^petstore_consumer_groups 2$/m);
      assert.match(metrics, /^petstore_consumer_group_events\{state="in_flight"\} 1$/m);
      assert.match(metrics, /^petstore_consumer_group_events\{state="waiting"\} 1$/m, 'a retry waits in its group; events past a cursor are lag, not waiting');
      assert.match(metrics, /^petstore_consumer_group_events\{state="parked"\} 1$/m);
      assert.match(metrics, /^petstore_consumer_group_max_lag_events 4$/m, 'group two has settled nothing');
      assert.doesNotMatch(metrics, /group="/);
    } finally {
      await own.stop();
    }
  });
});
