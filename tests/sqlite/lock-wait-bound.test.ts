import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, StoreUnavailable } from '../../application/index.ts';
import { checkReadiness } from '../../adapters/store/store-health.ts';
import type { SqliteConnection } from '../../adapters/store/sqlite/sqlite-connection.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { openSqliteStoreBesideLockHolder } from '../support/temporary-store.ts';

const LOCK_WAIT_MS = 1000;
/** Room for the machine's own delays past the bound. */
const SLACK_MS = 400;

describe('a write waits for a held SQLite lock at most the bound from its arrival, whatever else waits on the writer', () => {
  let store: SqlitePetStore;
  let other: SqliteConnection;
  let close: () => Promise<void>;

  before(async () => {
    ({ store, other, close } = await openSqliteStoreBesideLockHolder('lock-bound', { lockWaitMs: LOCK_WAIT_MS }));
  });
  after(() => close());

  it('answers a write queued behind writes beside the log (webhook state, lease rounds) with 503 within the bound, and readiness within a second', async () => {
    await addPet(store, { name: 'before', categoryId: 1 });
    other.exec('BEGIN IMMEDIATE');
    try {
      // Work beside the log, as the webhook dispatcher's lease rounds and delivery state write, each waiting for the lock.
      const beside = Array.from({ length: 3 }, () => store.writeOutsideLog!((db) => db.selectFrom('pets').select('id').execute()).then(() => 'committed', () => 'failed'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const arrived = performance.now();
      const writes = await Promise.allSettled(Array.from({ length: 4 }, async () => {
        try {
          await addPet(store, { name: 'during', categoryId: 1 });
          return { outcome: 'committed', waited: performance.now() - arrived };
        } catch (error) {
          return { outcome: error, waited: performance.now() - arrived };
        }
      }));
      for (const write of writes) {
        const { outcome, waited } = (write as PromiseFulfilledResult<{ outcome: unknown; waited: number }>).value;
        assert.ok(outcome instanceof StoreUnavailable, `a write failed as unavailable, not ${String(outcome)}`);
        assert.ok(waited < LOCK_WAIT_MS + SLACK_MS, `a write waited ${Math.round(waited)} ms for a bound of ${LOCK_WAIT_MS} ms`);
      }
      const asked = performance.now();
      const readiness = await checkReadiness(store);
      const answeredIn = performance.now() - asked;
      assert.equal(readiness.ready, false, 'not ready while writes cannot commit');
      assert.ok(answeredIn < 1000, `readiness answered in ${Math.round(answeredIn)} ms`);
      await Promise.all(beside);
    } finally {
      other.exec('COMMIT');
    }
    assert.equal((await addPet(store, { name: 'after', categoryId: 1 })).name, 'after');
    assert.deepEqual(await checkReadiness(store), { ready: true });
  });
});
