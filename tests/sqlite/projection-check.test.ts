import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet } from '../../application/index.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import { verifyProjection } from '../support/projection-check.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';
import type { TemporarySqliteStore } from '../support/temporary-store.ts';

/** The check the crash tests rely on must itself see every kind of drift between log and read model. */
describe('verifyProjection', () => {
  let opened: TemporarySqliteStore;
  let store: SqlPetStore;

  before(async () => {
    opened = await openTemporaryStore('sqlite');
    store = opened.store;
    for (const [index, status] of (['available', undefined, 'sold'] as const).entries()) {
      await addPet(store, status ? { name: `pet ${index}`, categoryId: index + 1, status } : { name: `pet ${index}`, categoryId: index + 1 });
    }
  });
  after(() => opened.close());

  it('finds a live store clean', async () => {
    assert.deepEqual(await verifyProjection(store.db), { events: 3, streams: 3, pets: 3, problems: [] });
  });

  it('reports a field that differs from the log', async () => {
    await store.db.updateTable('pets').set({ name: 'changed' }).where('id', '=', 1).execute();
    const report = await verifyProjection(store.db);
    await store.db.updateTable('pets').set({ name: 'pet 0' }).where('id', '=', 1).execute();
    assert.equal(report.problems.length, 1);
    assert.match(report.problems[0]!, /^pets row 1 is .*"changed"/);
  });

  it('reports a status the log never gave', async () => {
    await store.db.updateTable('pets').set({ status: 'pending' }).where('id', '=', 2).execute();
    const report = await verifyProjection(store.db);
    await store.db.updateTable('pets').set({ status: null }).where('id', '=', 2).execute();
    assert.equal(report.problems.length, 1);
  });

  it('reports a row without events and events without a row', async () => {
    const row = await store.db.selectFrom('pets').selectAll().where('id', '=', 3).executeTakeFirstOrThrow();
    await store.db.deleteFrom('pets').where('id', '=', 3).execute();
    await store.db.insertInto('pets').values({ ...row, id: 99 }).execute();
    const report = await verifyProjection(store.db);
    await store.db.deleteFrom('pets').where('id', '=', 99).execute();
    await store.db.insertInto('pets').values(row).execute();
    assert.deepEqual([...report.problems].sort(), ['pet 3 is in the log but not in the pets table', 'pets row 99 has no events', 'the id sequence is at 3, below pet 99']);
    assert.deepEqual((await verifyProjection(store.db)).problems, []);
  });
});
