import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { addPet, changePetStatus, getPet, listPets, UnknownEventShape } from '../../application/index.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import { rebuildReadModels, verifyReadModels } from '../../adapters/store/read-models/read-model-maintenance.ts';
import { writeBulkLog } from '../support/bulk-log.ts';
import { runPetstore } from '../support/cli.ts';
import { verifyProjection } from '../support/projection-check.ts';
import { openTemporaryStore, temporaryDirectory } from '../support/temporary-store.ts';
import type { TemporarySqliteStore } from '../support/temporary-store.ts';

/** Runs the petstore CLI on a database; resolves with its exit code and output, whatever the code. */
function petstore(database: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runPetstore(args, { PETSTORE_DATABASE: database });
}

describe('projection rebuild and verify', () => {
  let opened: TemporarySqliteStore;
  let file: string;
  let store: SqlPetStore;

  before(async () => {
    opened = await openTemporaryStore('sqlite');
    ({ file, store } = opened);
    for (let index = 1; index <= 30; index++) {
      const pet = await addPet(store, index % 3 === 0 ? { name: `pet ${index}`, categoryId: index } : { name: `pet ${index}`, categoryId: index, status: 'available' });
      if (index % 2 === 0) await changePetStatus(store, { id: pet.id, status: 'pending' });
      if (index % 4 === 0) await changePetStatus(store, { id: pet.id, status: 'sold' });
    }
  });
  after(() => opened.close());

  it('finds no difference when the read model was kept by the inline projection', async () => {
    assert.deepEqual(await verifyReadModels(store), []);
  });

  it('reports a changed row, a missing row and an extra row, each by id', async () => {
    await sql`update pets set name = 'tampered' where id = 5`.execute(store.db);
    await sql`delete from pets where id = 6`.execute(store.db);
    await sql`insert into pets (id, name, category_id, status, version, created_at, updated_at) values (999, 'ghost', 1, null, 1, 'x', 'x')`.execute(store.db);
    const differences = await verifyReadModels(store);
    assert.deepEqual(differences.map(({ id, kind }) => ({ id, kind })), [
      { id: 5, kind: 'different' },
      { id: 6, kind: 'missing' },
      { id: 999, kind: 'unexpected' },
    ]);
    assert.equal(differences[0]!.expected!.name, 'pet 5');
    assert.equal(differences[0]!.actual!.name, 'tampered');
  });

  it('the CLI verify prints the differences and exits 1', async () => {
    const result = await petstore(file, 'projection', 'verify');
    assert.equal(result.code, 1);
    assert.match(result.stdout, /"id":5,"kind":"different"/);
    assert.match(result.stdout, /3 difference\(s\)/);
  });

  it('the CLI rebuild replays the log into a fresh read model; verify then exits 0', async () => {
    const rebuilt = await petstore(file, 'projection', 'rebuild');
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.match(rebuilt.stdout, /30 rows from \d+ events/);
    const verified = await petstore(file, 'projection', 'verify');
    assert.equal(verified.code, 0, verified.stdout);
    assert.match(verified.stdout, /matches the log/);
    const plan = await sql.raw<{ detail: string }>("explain query plan select id from pets where status = 'sold' order by id limit 20").execute(store.db);
    assert.match(plan.rows.map((row) => row.detail).join(' '), /INDEX pets_status_id/);
  });

  it('rebuilds while writers keep writing, losing none of their writes', async () => {
    const writes = (async () => {
      const made = [];
      for (let index = 0; index < 40; index++) made.push(await addPet(store, { name: `during ${index}`, categoryId: 1, status: 'pending' }));
      return made;
    })();
    const [result, made] = await Promise.all([rebuildReadModels(store), writes]);
    assert.ok(result.rows >= 30);
    assert.deepEqual(await verifyReadModels(store), []);
    const pending = await listPets(store, { status: 'pending', limit: 100 });
    for (const pet of made) assert.ok(pending.some((listed) => listed.id === pet.id), `pet ${pet.id} is listed after the rebuild`);
  });
});

describe('projection rebuild over a log of many pages', () => {
  let opened: TemporarySqliteStore;
  let store: SqlPetStore;

  before(async () => {
    opened = await openTemporaryStore('sqlite');
    store = opened.store;
  });
  after(() => opened.close());

  it('rebuilds every pet from a log written without its read model, old event shapes included', async () => {
    const expected = await writeBulkLog(store.db, 12_000);
    await store.db.updateTable('sequences').set({ value: expected.length }).where('name', '=', 'pet_id').execute();
    const { events } = await store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('events')).executeTakeFirstOrThrow();
    assert.deepEqual(await rebuildReadModels(store), { events, rows: expected.length });
    assert.deepEqual(await store.db.selectFrom('pets').selectAll().orderBy('id').execute(), expected);
    assert.deepEqual((await verifyProjection(store.db)).problems, []);
    assert.deepEqual(await verifyReadModels(store), []);
  });

  // Long enough that, on Node, the unlocked replay reads on a thread and connection of its own.
  it('rebuilds a long log while writers keep writing, losing none of their writes', async () => {
    const writes = (async () => {
      const made = [];
      for (let index = 0; index < 40; index++) {
        const pet = await addPet(store, { name: `during ${index}`, categoryId: 1, status: 'available' });
        if (index % 2 === 1) made.push({ pet, version: 1 });
        else {
          const { pet: changed, version } = await changePetStatus(store, { id: pet.id, status: 'pending' });
          made.push({ pet: changed, version });
        }
      }
      return made;
    })();
    const [result, made] = await Promise.all([rebuildReadModels(store), writes]);
    assert.ok(result.rows >= 12_000);
    assert.deepEqual((await verifyProjection(store.db)).problems, []);
    for (const written of made) assert.deepEqual(await getPet(store, written.pet.id), written);
  });

  it('reads every event through the upcasters: a shape it cannot read fails the rebuild, which changes nothing', async () => {
    const before = await store.db.selectFrom('pets').selectAll().orderBy('id').execute();
    const recordedAt = '2026-12-01T00:00:00.000Z';
    await store.db.insertInto('events').values({
      stream_id: 'pet-1', stream_version: 3, type: 'PetStatusChanged', data: JSON.stringify({ id: 1, from: 'available', to: 'sold' }),
      metadata: JSON.stringify({ schemaVersion: 99, recordedAt }), recorded_at: recordedAt,
    }).execute();
    try {
      await assert.rejects(rebuildReadModels(store), UnknownEventShape);
      await assert.rejects(verifyReadModels(store), UnknownEventShape);
    } finally {
      await store.db.deleteFrom('events').where('stream_id', '=', 'pet-1').where('stream_version', '=', 3).execute();
    }
    assert.deepEqual(await store.db.selectFrom('pets').selectAll().orderBy('id').execute(), before);
  });
});

describe('petstore CLI', () => {
  it('prints the usage of the command\'s group and exits 2 for an unknown command', async () => {
    const result = await petstore(':memory:', 'projection', 'explode');
    assert.equal(result.code, 2);
    assert.match(result.stderr, /unknown command: projection explode/);
    assert.match(result.stderr, /usage: petstore projection <rebuild\|verify>/);
  });

  it('prints help for a command and exits 0', async () => {
    const result = await petstore(':memory:', 'migrate', '--help');
    assert.equal(result.code, 0);
    assert.match(result.stdout, /petstore migrate/);
  });

  it('refuses a bad configuration naming the variable, exit 1', async () => {
    const result = await runPetstore(['migrate'], { PETSTORE_LOG_LEVEL: 'loud' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /PETSTORE_LOG_LEVEL is invalid/);
  });

  it('migrates a new database and then reports it up to date', async () => {
    const directory = temporaryDirectory('migrate');
    try {
      const first = await petstore(directory.file('m.db'), 'migrate');
      assert.equal(first.code, 0);
      assert.match(first.stdout, /applied \d+ migration\(s\): 0001_/);
      const second = await petstore(directory.file('m.db'), 'migrate');
      assert.match(second.stdout, /up to date/);
    } finally {
      directory.remove();
    }
  });
});
