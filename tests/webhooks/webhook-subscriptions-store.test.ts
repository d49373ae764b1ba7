import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet } from '../../application/index.ts';
import { createSqlWebhookSubscriptions } from '../../adapters/webhooks/sql-webhook-subscriptions.ts';
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
      assert.deepEqual(await subscriptions.lease('a', now, later), [subscription.id]);
      assert.deepEqual(await subscriptions.lease('b', now, later), [], 'held by a until it expires');
      assert.equal(await subscriptions.advance(subscription.id, 'b', 5, now), false);
      assert.equal(await subscriptions.fixBatch(subscription.id, 'b', 5), false);
      assert.equal(await subscriptions.fixBatch(subscription.id, 'a', 5), true);
      assert.equal((await subscriptions.get(subscription.id))!.batchUntil, 5);
      assert.equal(await subscriptions.advance(subscription.id, 'a', 5, now), true);
      assert.equal((await subscriptions.get(subscription.id))!.batchUntil, null, 'the batch delivered, none is in flight');
      assert.deepEqual(await subscriptions.lease('b', later, new Date(later.getTime() + 10_000)), [], 'still held at its expiry');
      const expired = new Date(later.getTime() + 1);
      assert.deepEqual(await subscriptions.lease('b', expired, new Date(expired.getTime() + 10_000)), [subscription.id], 'taken over once expired');
      assert.equal(await subscriptions.advance(subscription.id, 'a', 6, now), false, 'the old holder moves nothing');
      assert.equal((await subscriptions.get(subscription.id))!.position, 5);
      assert.equal(await subscriptions.failed(subscription.id, 'b', { attempts: 9, lastError: 'answered 500', failingSince: now.toISOString(), nextTryAt: undefined }), true);
      const failing = (await subscriptions.get(subscription.id))!;
      assert.equal(failing.status, 'failing');
      assert.deepEqual(await subscriptions.lease('b', expired, later), [], 'a failing subscription is not delivered');
      assert.equal(await subscriptions.resume(subscription.id), true);
      assert.deepEqual(await subscriptions.lease('b', expired, later), [subscription.id]);
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
      store.changes.subscribe((changes) => told.push(changes));
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date();
      const { subscription } = await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h' }, now, 100);
      await subscriptions.lease('a', now, new Date(now.getTime() + 10_000));
      await subscriptions.advance(subscription.id, 'a', 0, now);
      store.changes.refresh();
      assert.deepEqual(told, [], 'no commit that might have changed the catalogue');

      // The same write around the store is taken for anyone's commit: what the first check relies on.
      await store.db.updateTable('webhooks').set({ attempts: 1 }).where('id', '=', subscription.id).execute();
      store.changes.refresh();
      assert.deepEqual(told, [undefined]);
    } finally {
      await close();
    }
  });
});
