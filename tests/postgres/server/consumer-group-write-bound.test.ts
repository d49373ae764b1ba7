import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestDatabase } from '../../support/postgres.ts';
import type { TestDatabase } from '../../support/postgres.ts';
import { startTestService } from '../../support/test-service.ts';
import type { TestService } from '../../support/test-service.ts';

const TIMEOUT_MS = 1500;

describe('a consumer group write on PostgreSQL, bounded from its arrival', () => {
  let database: TestDatabase;
  let api: TestService;
  const clients: pg.Client[] = [];
  before(async () => {
    database = await createTestDatabase();
    api = await startTestService({ PETSTORE_DATABASE: database.url, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
    for (let index = 0; index < 2; index++) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      clients.push(client);
    }
  });
  after(async () => {
    for (const client of clients) await client.end();
    await api?.stop();
    await database?.drop();
  });

  const send = (path: string, body: unknown) =>
    api.request(`/v1/consumer-groups/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('an ack whose statements each wait less than the statement timeout, but longer in all, is 503 with Retry-After within the bound and acks nothing', { timeout: 30_000 }, async () => {
    assert.equal((await api.request('/v1/consumer-groups/g', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 201);
    assert.equal((await api.createPet({ name: 'Held', categoryId: 1 })).status, 201);
    const { claims } = (await (await send('g/claims', { consumer: 'c', max: 1 })).json()) as { claims: { lease: string; position: number }[] };
    assert.equal(claims.length, 1);
    const [groupLock, rowLock] = clients as [pg.Client, pg.Client];
    // The ack waits first for the group's row, then for its lease's (a fresh event's is a range's row): each wait shorter than the timeout.
    await rowLock.query('begin');
    await rowLock.query('select 1 from consumer_group_leases where from_position <= $1 and to_position >= $1 for update', [claims[0]!.position]);
    await groupLock.query('begin');
    await groupLock.query("select 1 from consumer_groups where name = 'g' for update");
    const released = (client: pg.Client, afterMs: number) => new Promise<void>((resolve, reject) => {
      setTimeout(() => void client.query('commit').then(() => resolve(), reject), afterMs);
    });
    const asked = performance.now();
    const acking = send('g/acks', { leases: [claims[0]!.lease] });
    const groupReleased = released(groupLock, TIMEOUT_MS * 0.7);
    const rowReleased = released(rowLock, TIMEOUT_MS * 1.5);
    const answer = await acking;
    const tookMs = performance.now() - asked;
    await groupReleased;
    await rowReleased;
    assert.equal(answer.status, 503, `answered ${answer.status} after ${Math.round(tookMs)} ms: ${await answer.clone().text()}`);
    assert.ok(answer.headers.get('retry-after'), 'Retry-After');
    assert.ok(tookMs < TIMEOUT_MS * 1.4, `answered within the bound, not once the locks were gone: ${Math.round(tookMs)} ms`);
    const again = (await (await send('g/acks', { leases: [claims[0]!.lease] })).json()) as { acked: number };
    assert.equal(again.acked, 1, 'the refused ack was rolled back: the lease was still held');
  });
});
