import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { GROUP_LIMITS } from '../../application/index.ts';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

type Claims = { claims: { lease: string; position: number; deliveries: number; event: { subject: string } }[] };

describe('claims that wait for events, over HTTP', () => {
  let api: TestService;
  const send = (method: string, path: string, body?: unknown, init: { key?: string; signal?: AbortSignal } = {}) =>
    api.request(`/v1/consumer-groups${path}`, {
      method, key: init.key ?? TEST_API_KEY, ...(init.signal ? { signal: init.signal } : {}),
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });

  /** Resolves once the groups of `key` (named from `prefix`) show `count` consumers in all: their claims have made their first look. */
  const consumersShown = async (count: number, key = TEST_API_KEY, prefix = '') => {
    for (;;) {
      const groups = (await (await send('GET', '', undefined, { key })).json()) as { group: string; consumers: unknown[] }[];
      if (groups.filter((group) => group.group.startsWith(prefix)).reduce((sum, group) => sum + group.consumers.length, 0) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  before(async () => {
    api = await startTestService();
  });
  after(() => api.stop());

  it('a waiting claim whose client disconnects takes no lease: the next event goes to a live worker at once', async () => {
    assert.equal((await send('PUT', '/left', { start: 'end' })).status, 201);
    const body = JSON.stringify({ consumer: 'stopped-worker', waitMs: 30_000 });
    const socket = connect(Number(new URL(api.origin).port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const answered = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.once('close', () => resolve(text));
    });
    socket.write(
      `POST /v1/consumer-groups/left/claims HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n`
      + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // The worker is stopped while its claim waits (kill -9 or a dropped connection look alike to the service).
    await consumersShown(1, TEST_API_KEY, 'left');
    socket.destroy();
    assert.equal(await answered, '', 'nothing was answered to the stopped worker');
    const pet = await api.createPet({ name: 'For the living', categoryId: 1 });
    assert.equal(pet.status, 201);
    const { id } = (await pet.json()) as { id: number };
    const live = await send('POST', '/left/claims', { consumer: 'live-worker', waitMs: 0 });
    assert.equal(live.status, 200);
    const { claims } = (await live.json()) as Claims;
    assert.deepEqual(claims.map((claim) => [claim.event.subject, claim.deliveries]), [[`pets/${id}`, 1]]);
  });

  it('a revoked key\'s waiting claim ends with 401 and hands out nothing committed after', async () => {
    const { id, key } = await api.service.apiKeys.create('revoked-waiter', new Date());
    assert.equal((await send('PUT', '/revoked-waiter', { start: 'end' }, { key })).status, 201);
    const waiting = send('POST', '/revoked-waiter/claims', { consumer: 'c', waitMs: 30_000 }, { key });
    await consumersShown(1, key);
    assert.equal(await api.service.apiKeys.revoke(id, new Date()), true);
    assert.equal((await api.createPet({ name: 'After the revocation', categoryId: 1 })).status, 201);
    const answer = await waiting;
    assert.equal(answer.status, 401);
    assert.equal((await readError(answer)).code, 'unauthorized');
    const store = await api.database();
    const leased = await store.db.selectFrom('consumer_group_exceptions').innerJoin('consumer_groups', 'consumer_groups.id', 'consumer_group_exceptions.group_id')
      .select('position').where('consumer_groups.name', '=', 'revoked-waiter').where('state', '=', 'leased').execute();
    // A fresh event's lease is kept as a range of the log.
    const ranged = await store.db.selectFrom('consumer_group_leases').innerJoin('consumer_groups', 'consumer_groups.id', 'consumer_group_leases.group_id')
      .select('from_position as position').where('consumer_groups.name', '=', 'revoked-waiter').execute();
    assert.deepEqual([...leased, ...ranged], [], 'no lease taken for the revoked key');
  });

  it(`waiting claims are capped per key (${GROUP_LIMITS.waitingClaimsPerKey}): one more is 429 with Retry-After, and no listener warning is printed`, async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const stop = new AbortController();
    const waiting: Promise<unknown>[] = [];
    try {
      for (let index = 0; index < 10; index++) assert.equal((await send('PUT', `/capped-${index}`, { start: 'end' })).status, 201);
      for (let index = 0; index < GROUP_LIMITS.waitingClaimsPerKey; index++) {
        waiting.push(send('POST', `/capped-${index % 10}/claims`, { consumer: `w${index}`, waitMs: 30_000 }, { signal: stop.signal }).catch(() => undefined));
      }
      // Each claim is admitted before its first look shows its consumer.
      await consumersShown(GROUP_LIMITS.waitingClaimsPerKey, TEST_API_KEY, 'capped-');
      const refused = await send('POST', '/capped-0/claims', { consumer: 'one-too-many', waitMs: 30_000 });
      assert.equal(refused.status, 429);
      assert.equal((await readError(refused)).code, 'rate_limited');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      const now = await send('POST', '/capped-0/claims', { consumer: 'not-waiting', waitMs: 0 });
      assert.equal(now.status, 200, 'a claim that does not wait is not capped');
    } finally {
      stop.abort();
      await Promise.all(waiting);
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings.filter((name) => name === 'MaxListenersExceededWarning'), []);
  });
});
