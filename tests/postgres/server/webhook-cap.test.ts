import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookLimitReached } from '../../../application/index.ts';
import { createSqlWebhookSubscriptions } from '../../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { openTemporaryStore } from '../../support/temporary-store.ts';

describe('the per-key cap on webhook subscriptions on PostgreSQL', () => {
  it('holds when one key creates many at once: exactly the cap is created, every other create refused', async () => {
    const { store, close } = await openTemporaryStore('postgres', { poolSize: 10 });
    try {
      const subscriptions = createSqlWebhookSubscriptions(store);
      const now = new Date('2026-01-01T00:00:00Z');
      const cap = 3;
      const outcomes = await Promise.allSettled(
        Array.from({ length: 24 }, (_, index) => subscriptions.create({ ownerKeyId: 'crowd', url: `https://93.184.215.14/h/${index}` }, now, cap)),
      );
      assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, cap);
      for (const outcome of outcomes) if (outcome.status === 'rejected') assert.ok(outcome.reason instanceof WebhookLimitReached, String(outcome.reason));
      assert.equal((await subscriptions.list('crowd')).length, cap);
      await subscriptions.create({ ownerKeyId: 'another', url: 'https://93.184.215.14/other' }, now, cap);
      assert.equal((await subscriptions.list('another')).length, 1, "another key's cap is its own");
    } finally {
      await close();
    }
  });
});
