import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, StoreUnavailable } from '../../application/index.ts';
import { checkReadiness } from '../../adapters/store/store-health.ts';
import type { SqliteConnection } from '../../adapters/store/sqlite/sqlite-connection.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { stepClocks } from '../support/stepped-clocks.ts';
import type { SteppedClocks } from '../support/stepped-clocks.ts';
import { openSqliteStoreBesideLockHolder } from '../support/temporary-store.ts';

const HOUR_MS = 3_600_000;

describe('readiness and the write check follow the monotonic clock, not the wall clock', () => {
  let store: SqlitePetStore;
  let other: SqliteConnection;
  let close: () => Promise<void>;
  let clocks: SteppedClocks;

  before(async () => {
    ({ store, other, close } = await openSqliteStoreBesideLockHolder('stepped-clock', { lockWaitMs: 200 }));
    clocks = stepClocks();
  });
  after(async () => {
    clocks.restore();
    await close();
  });

  it('is ready again once the lock is released and the fault has been quiet, with the wall clock stepped back an hour and forward again', async () => {
    other.exec('BEGIN IMMEDIATE');
    try {
      await assert.rejects(addPet(store, { name: 'during', categoryId: 1 }), StoreUnavailable);
      assert.equal((await checkReadiness(store)).ready, false, 'not ready while the lock is held');
    } finally {
      other.exec('COMMIT');
    }
    clocks.stepWall(-HOUR_MS);
    // Longer than the write check's rate limit and the quiet spell that ends a fault: no write since.
    clocks.pass(5_000);
    assert.deepEqual(await checkReadiness(store), { ready: true }, 'ready with the wall clock an hour back');
    clocks.stepWall(2 * HOUR_MS);
    assert.deepEqual(await checkReadiness(store), { ready: true }, 'still ready with the wall clock an hour ahead');
    assert.equal((await addPet(store, { name: 'after', categoryId: 1 })).name, 'after');
  });
});
