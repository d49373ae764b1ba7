import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet } from '../../application/index.ts';
import { createSqlConsumerGroups } from '../../adapters/store/tables/consumer-groups.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

describe('a claim whose page of the log was read before another claim moved the cursor (SQL stores)', () => {
  it('reads the page after the cursor itself and leases from it, never an event twice', async () => {
    const opened = await openTemporaryStore('sqlite');
    try {
      const { store } = opened;
      const group = createSqlConsumerGroups(store).group('1', 'g');
      await createSqlConsumerGroups(store).create('1', 'g', { ackTimeoutMs: 30_000, maxDeliveries: 5, start: 'beginning' }, 0, store.clock.now(), 10);
      for (let index = 0; index < 6; index++) await addPet(store, { name: `Pet ${index}`, categoryId: 1 });
      // Both read the same page at the same cursor, as two consumers' claims do before either commits.
      const read = async () => ({ after: 0, events: await store.eventLog.readLog({ after: 0, limit: 3 }), holdRoom: 100 });
      const [first, second] = [await read(), await read()];
      const claim = (consumer: string, fresh: typeof first) => group.claim({ consumer, max: 3, now: store.clock.now(), seen: true, fresh });
      const a = await claim('a', first);
      const b = await claim('b', second);
      assert.ok(a && 'claims' in a && b && 'claims' in b);
      assert.deepEqual(a.claims.map((claim) => claim.position), [1, 2, 3]);
      assert.deepEqual(b.claims.map((claim) => claim.position), [4, 5, 6], 'the second claim leased the events after the cursor the first one moved');
    } finally {
      await opened.close();
    }
  });
});
