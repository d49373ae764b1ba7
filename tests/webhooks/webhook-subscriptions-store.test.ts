import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet } from '../../application/index.ts';
import { createSqlWebhookSubscriptions } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

describe('webhook subscriptions on SQLite', () => {
  it('start at the end of the log; lease, advance and fail only for the holder', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    try {
      await addPet(store, { name: 'Rex', categoryId: 1 });
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date('2026-01-01T00:00:00Z');
      const later = new Date(now.getTime() + 10_000);
      const { subscription } = await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h', types: ['PetAdded'] }, now, 100);
      assert.equal(subscription.position, 1, 'from the end of the log');
      assert.deepEqual(subscription.types, ['PetAdded']);
      assert.deepEqual(await subscriptions.lease('a', now, later), [{ id: subscription.id, replays: 0 }]);
      assert.deepEqual(await subscriptions.lease('b', now, later), [], 'held by a until it expires');
      assert.equal(await subscriptions.advance(subscription.id, { holder: 'b', replays: 0 }, 5, now), false);
      assert.equal(await subscriptions.fixBatch(subscription.id, { holder: 'b', replays: 0 }, 5), false);
      assert.equal(await subscriptions.fixBatch(subscription.id, { holder: 'a', replays: 0 }, 5), true);
      assert.equal((await subscriptions.get(subscription.id))!.batchUntil, 5);
      assert.equal(await subscriptions.advance(subscription.id, { holder: 'a', replays: 0 }, 5, now), true);
      assert.equal((await subscriptions.get(subscription.id))!.batchUntil, null, 'the batch delivered, none is in flight');
      assert.deepEqual(await subscriptions.lease('b', later, new Date(later.getTime() + 10_000)), [], 'still held at its expiry');
      const expired = new Date(later.getTime() + 1);
      assert.deepEqual(await subscriptions.lease('b', expired, new Date(expired.getTime() + 10_000)), [{ id: subscription.id, replays: 0 }], 'taken over once expired');
      assert.equal(await subscriptions.advance(subscription.id, { holder: 'a', replays: 0 }, 6, now), false, 'the old holder moves nothing');
      assert.equal((await subscriptions.get(subscription.id))!.position, 5);
      assert.equal(await subscriptions.failed(subscription.id, { holder: 'b', replays: 0 }, { attempts: 9, lastError: 'answered 500', failingSince: now.toISOString(), nextTryAt: undefined }), true);
      const failing = (await subscriptions.get(subscription.id))!;
      assert.equal(failing.status, 'failing');
      assert.deepEqual(await subscriptions.lease('b', expired, later), [], 'a failing subscription is not delivered');
      assert.equal(await subscriptions.resume(subscription.id), true);
      assert.deepEqual(await subscriptions.lease('b', expired, later), [{ id: subscription.id, replays: 0 }]);
      assert.equal((await subscriptions.get(subscription.id))!.attempts, 0);
    } finally {
      await close();
    }
  });

  it('renews and takes every lease of an instance in the same few statements, whatever the number of subscriptions', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    try {
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date('2026-01-01T00:00:00Z');
      let statements = 0;
      const counting = createSqlWebhookSubscriptions({
        ...store,
        writeOutsideLog: (work) => store.writeOutsideLog!((on) => work(on.withPlugin({ transformQuery: (args) => (statements++, args.node), transformResult: async (args) => args.result }))),
      });
      const statementsOfLease = async () => {
        statements = 0;
        const held = await counting.lease('a', now, new Date(now.getTime() + 10_000));
        return { held: held.length, statements };
      };
      for (let index = 0; index < 3; index++) await subscriptions.create({ ownerKeyId: '1', url: `https://93.184.215.14/h/${index}` }, now, 1000);
      const few = await statementsOfLease();
      for (let index = 3; index < 300; index++) await subscriptions.create({ ownerKeyId: '1', url: `https://93.184.215.14/h/${index}` }, now, 1000);
      const many = await statementsOfLease();
      assert.deepEqual({ few: few.held, many: many.held }, { few: 3, many: 300 });
      assert.ok(many.statements > 0 && many.statements === few.statements, `${few.statements} statements for 3 subscriptions, ${many.statements} for 300`);
    } finally {
      await close();
    }
  });

  it('write the delivery state as the store\'s own commits: caches and followers of the log are not told', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    try {
      const told: unknown[] = [];
      store.commits.onCommitted(({ changes }) => told.push(changes));
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date();
      const { subscription } = await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h' }, now, 100);
      await subscriptions.lease('a', now, new Date(now.getTime() + 10_000));
      await subscriptions.advance(subscription.id, { holder: 'a', replays: 0 }, 0, now);
      await store.commits.refresh();
      assert.deepEqual(told, [], 'no commit that might have changed the catalogue');

      // The same write around the store is taken for anyone's commit: what the first check relies on.
      await store.db.updateTable('webhooks').set({ attempts: 1 }).where('id', '=', subscription.id).execute();
      await store.commits.refresh();
      assert.deepEqual(told, [undefined]);
    } finally {
      await close();
    }
  });
});

describe('webhook attempt logs, rotation and replay on SQLite', () => {
  const attempt = (at: Date, position: number) => ({
    attemptedAt: at.toISOString(), messageId: `msg_x_${position}`, positions: [position], responseStatus: position % 2 === 0 ? 200 : null, durationMs: 3, error: position % 2 === 0 ? null : 'no answer within 10 ms',
  });

  it('keep the newest 100 attempts of a subscription, newest first, paged by id, and drop those older than 7 days', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    try {
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date('2026-01-10T00:00:00Z');
      const { subscription } = await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h' }, now, 100);
      const other = (await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h' }, now, 100)).subscription;
      await subscriptions.lease('a', now, new Date(now.getTime() + 10_000));
      const eightDaysAgo = new Date(now.getTime() - 8 * 86_400_000);
      await subscriptions.advance(other.id, { holder: 'nobody', replays: 0 }, 0, now, [attempt(now, 1)]);
      await subscriptions.advance(subscription.id, { holder: 'a', replays: 0 }, 0, eightDaysAgo, [attempt(eightDaysAgo, 1)]);
      assert.deepEqual(await subscriptions.attempts(subscription.id, { limit: 10 }, now), [], 'an attempt older than 7 days is not shown');
      for (let position = 2; position <= 130; position += 43) {
        const made = Array.from({ length: 43 }, (_, offset) => attempt(new Date(now.getTime() - 1000 + position + offset), position + offset));
        await subscriptions.advance(subscription.id, { holder: 'a', replays: 0 }, position, now, made);
      }
      const kept = await store.db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', subscription.id).execute();
      assert.equal(kept.length, 100, 'the newest 100 stay, the older and the 8-day-old one are deleted');
      const first = await subscriptions.attempts(subscription.id, { limit: 30 }, now);
      assert.deepEqual(first.map((row) => row.positions[0]), Array.from({ length: 30 }, (_, index) => 130 - index), 'newest first');
      assert.deepEqual(first[0], { id: first[0]!.id, ...attempt(new Date(now.getTime() - 1000 + 130), 130) });
      const second = await subscriptions.attempts(subscription.id, { limit: 100, before: first.at(-1)!.id }, now);
      assert.equal(second.length, 70);
      assert.equal(second[0]!.positions[0], 100);
      assert.equal((await subscriptions.attempts(other.id, { limit: 10 }, now)).length, 1, "another subscription's log is its own");
      await subscriptions.delete(subscription.id);
      assert.equal((await store.db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', subscription.id).execute()).length, 0);
    } finally {
      await close();
    }
  });

  it('rotate the secret, keeping the replaced one for the overlap', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    try {
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date('2026-01-10T00:00:00Z');
      const { subscription, secret } = await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h' }, now, 100);
      assert.deepEqual((await subscriptions.withSecret(subscription.id))!.secrets, { current: secret });
      const rotated = await subscriptions.rotateSecret(subscription.id, now, 60_000);
      assert.match(rotated!, /^whsec_/);
      assert.notEqual(rotated, secret);
      assert.deepEqual((await subscriptions.withSecret(subscription.id))!.secrets, { current: rotated, previous: { secret, until: '2026-01-10T00:01:00.000Z' } });
      assert.equal(await subscriptions.rotateSecret('wh_none', now, 60_000), undefined);
    } finally {
      await close();
    }
  });

  it('replay from a position up to the log end: active again, retries cleared, and the run that was delivering writes nothing more', async () => {
    const { store, close } = await openTemporaryStore('sqlite');
    try {
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date('2026-01-10T00:00:00Z');
      const later = new Date(now.getTime() + 10_000);
      await addPet(store, { name: 'Rex', categoryId: 1 });
      await addPet(store, { name: 'Fido', categoryId: 1 });
      const { subscription } = await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h' }, now, 100);
      assert.deepEqual(await subscriptions.lease('a', now, later), [{ id: subscription.id, replays: 0 }]);
      assert.equal(await subscriptions.failed(subscription.id, { holder: 'a', replays: 0 }, { attempts: 9, lastError: 'answered 500', failingSince: now.toISOString(), nextTryAt: undefined }), true);
      assert.equal(await subscriptions.replay(subscription.id, 3), 'past_log_end');
      assert.equal(await subscriptions.replay('wh_none', 0), 'no_subscription');
      assert.deepEqual(await subscriptions.lease('b', now, later), [], 'failing: not delivered');
      assert.equal(await subscriptions.replay(subscription.id, 1), 'replaying');
      const replayed = (await subscriptions.get(subscription.id))!;
      assert.deepEqual([replayed.status, replayed.position, replayed.attempts, replayed.lastError, replayed.replays], ['active', 1, 0, null, 1]);
      assert.deepEqual(await subscriptions.lease('b', now, later), [{ id: subscription.id, replays: 1 }], 'active again: taken');
      assert.equal(await subscriptions.advance(subscription.id, { holder: 'b', replays: 1 }, 2, now), true);
      assert.equal(await subscriptions.replay(subscription.id, 0), 'replaying');
      assert.deepEqual(await subscriptions.lease('b', now, later), [{ id: subscription.id, replays: 2 }], 'the holder keeps the lease and sees the replay');
      assert.equal(await subscriptions.advance(subscription.id, { holder: 'b', replays: 1 }, 2, now), false, 'the run that began before the replay moves nothing');
      assert.equal(await subscriptions.fixBatch(subscription.id, { holder: 'b', replays: 1 }, 2), false);
      assert.equal(await subscriptions.failed(subscription.id, { holder: 'b', replays: 1 }, { attempts: 1, lastError: 'x', failingSince: now.toISOString(), nextTryAt: later.toISOString() }), false);
      assert.equal((await subscriptions.get(subscription.id))!.position, 0);
      assert.equal(await subscriptions.advance(subscription.id, { holder: 'b', replays: 2 }, 1, now), true, 'the new run does');
    } finally {
      await close();
    }
  });
});
