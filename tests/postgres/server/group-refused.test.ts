import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { IdempotencyKeyTaken } from '../../../application/index.ts';
import type { PetEvent } from '../../../domain/index.ts';
import { openTemporaryStore } from '../../support/temporary-store.ts';
import type { TemporaryPostgresStore } from '../../support/temporary-store.ts';
import { createPet } from '../../support/append-as-use-case.ts';

const metadata = { recordedAt: '2026-11-22T00:00:00.000Z' };
const added = (id: number): PetEvent => ({ type: 'PetAdded', data: { id, name: `pet ${id}`, categoryId: 1, status: 'available' } });
const record = (id: number, key: string) => ({ scope: 'k', key, fingerprint: '{}', answer: { id, name: `pet ${id}`, categoryId: 1 }, expiresAt: '2999-01-01T00:00:00.000Z' });

describe('a group whose write meets a row it did not read', () => {
  let opened: TemporaryPostgresStore;
  /** A writer outside the append lock, holding an uncommitted row. */
  let outsider: pg.Client;
  let observer: pg.Client;

  before(async () => {
    opened = await openTemporaryStore('postgres');
    outsider = new pg.Client({ connectionString: opened.url });
    await outsider.connect();
    observer = new pg.Client({ connectionString: opened.url });
    await observer.connect();
  });
  after(async () => {
    await outsider.end();
    await observer.end();
    await opened.close();
  });

  it('answers the append whose idempotency key was taken meanwhile alone, and commits the others', async () => {
    const { idempotencyKeys } = opened.store;
    const { eventStore } = opened.store;
    const creation = (key: string) => (id: number) => ({
      streamId: `pet-${id}`, events: [added(id)], metadata, options: { petAfter: { id, name: `pet ${id}`, categoryId: 1, status: 'available' as const }, remember: record(id, key) },
    });
    // Not yet visible to the group's read; its write waits for this row, then finds it live.
    await outsider.query('begin');
    await outsider.query("insert into idempotency_keys (scope, idempotency_key, fingerprint, answer, expires_at) values ('k', 'taken', 'outside', '{}', '2999-01-01T00:00:00.000Z')");
    const refusedIds: number[] = [];
    const outcomes = Promise.allSettled([
      createPet(eventStore, creation('free')),
      createPet(eventStore, (id) => (refusedIds.push(id), creation('taken')(id))),
    ]);
    for (const deadline = Date.now() + 10_000; ;) {
      const { rows } = await observer.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
      if (rows[0]!.n === 1) break;
      if (Date.now() > deadline) throw new Error('timed out waiting until the group waits for the outsider\'s row');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await outsider.query('commit');
    const [first, second] = await outcomes;
    assert.equal(first!.status, 'fulfilled');
    const kept = (first as PromiseFulfilledResult<{ id: number }>).value.id;
    const refused = refusedIds[0]!;
    assert.deepEqual(refusedIds, [refused, refused], 'built in the group, then alone under the same id');
    assert.ok(second!.status === 'rejected' && second!.reason instanceof IdempotencyKeyTaken, String((second as PromiseRejectedResult).reason));
    assert.equal((await eventStore.readStream(`pet-${kept}`)).version, 1);
    assert.equal((await eventStore.readStream(`pet-${refused}`)).version, 0);
    assert.deepEqual(await idempotencyKeys.find('k', 'free', new Date()), record(kept, 'free'));
    assert.equal((await idempotencyKeys.find('k', 'taken', new Date()))?.fingerprint, 'outside');
  });
});
