import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { addPet, changePetStatus, listPets } from '../../application/index.ts';
import { rebuildReadModels, verifyReadModels } from '../../adapters/store/read-models/read-model-maintenance.ts';
import { writeBulkLog } from '../support/bulk-log.ts';
import { testPostgresEngine } from '../support/postgres.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';
import type { TemporaryPostgresStore } from '../support/temporary-store.ts';

describe(`projection rebuild and verify on PostgreSQL (${testPostgresEngine()})`, () => {
  let opened: TemporaryPostgresStore;

  before(async () => {
    opened = await openTemporaryStore('postgres');
    for (let index = 1; index <= 20; index++) {
      const pet = await addPet(opened.store, { name: `pet ${index}`, categoryId: index, status: 'available' });
      if (index % 2 === 0) await changePetStatus(opened.store, { id: pet.id, status: 'sold' });
    }
  });
  after(() => opened.close());

  it('finds no difference in a read model kept by the inline projection', async () => {
    assert.deepEqual(await verifyReadModels(opened.store), []);
  });

  it('reports a changed, a missing and an extra row', async () => {
    await sql`update pets set status = 'pending' where id = 3`.execute(opened.store.db);
    await sql`delete from pets where id = 4`.execute(opened.store.db);
    await sql`insert into pets values (${2 ** 40}, 'ghost', 1, null, 1, 'x', 'x')`.execute(opened.store.db);
    const differences = await verifyReadModels(opened.store);
    assert.deepEqual(differences.map(({ id, kind }) => ({ id, kind })), [
      { id: 3, kind: 'different' }, { id: 4, kind: 'missing' }, { id: 2 ** 40, kind: 'unexpected' },
    ]);
    assert.equal(differences[0]!.expected!.status, 'available');
  });

  it('rebuilds while writers write and readers list, losing no write and failing no read, again and again', async () => {
    for (let round = 0; round < 2; round++) {
      let rebuilding = true;
      const writes = (async () => {
        const made = [];
        for (let index = 0; index < 30; index++) made.push(await addPet(opened.store, { name: `during ${round}.${index}`, categoryId: 1, status: 'pending' }));
        return made;
      })();
      const reads = (async () => {
        let count = 0;
        while (rebuilding || count === 0) {
          await listPets(opened.store, { limit: 100 });
          count++;
        }
        return count;
      })();
      const result = await rebuildReadModels(opened.store).finally(() => (rebuilding = false));
      const [made, readCount] = await Promise.all([writes, reads]);
      assert.ok(result.rows >= 20 && readCount > 0);
      assert.deepEqual(await verifyReadModels(opened.store), []);
      const pending = await listPets(opened.store, { status: 'pending', limit: 100 });
      for (const pet of made) assert.ok(pending.some((listed) => listed.id === pet.id), `pet ${pet.id} is listed after the rebuild`);
    }
    const indexes = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'pets' order by indexname`.execute(opened.store.db);
    assert.deepEqual(indexes.rows.map((row) => row.indexname), ['pets_pkey', 'pets_status_id']);
  });

  it('rebuilds pets logged without their read model over many pages, old event shapes included', async () => {
    // Ids far past any a sequence hands out here: the replay keeps those in a Map rather than an array.
    const firstId = 2 ** 40 + 1;
    const expected = await writeBulkLog(opened.store.db, 12_000, firstId);
    const before = await opened.store.db.selectFrom('pets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const result = await rebuildReadModels(opened.store);
    assert.equal(result.rows, Number(before.n) + expected.length);
    assert.deepEqual(await opened.store.db.selectFrom('pets').selectAll().where('id', '>=', firstId).orderBy('id').execute(), expected);
    assert.deepEqual(await verifyReadModels(opened.store), []);
  });
});
