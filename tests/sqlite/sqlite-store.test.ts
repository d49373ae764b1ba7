import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { addPet, getPet, listPets, StoreUnavailable } from '../../application/index.ts';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import { migrations } from '../../adapters/store/migrations.ts';
import { BUSY_TIMEOUT_MS, PAGE_CACHE_KIB } from '../../adapters/store/sqlite/open-sqlite.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import { NODE_TS_ARGS, OTHER_RUNTIME } from '../support/processes.ts';
import { openTemporaryStore, temporaryDirectory } from '../support/temporary-store.ts';
import type { TemporarySqliteStore } from '../support/temporary-store.ts';

const run = promisify(execFile);
/** Opens (and so migrates) the file given, adds one pet, prints it. */
const openAndAddPet = fileURLToPath(new URL('../support/fixtures/open-and-add-pet.ts', import.meta.url));

describe('SQLite pet store', () => {
  let opened: TemporarySqliteStore;
  let store: SqlPetStore;

  before(async () => {
    opened = await openTemporaryStore('sqlite');
    store = opened.store;
  });
  after(() => opened.close());

  it('runs WAL with durable commits (synchronous=FULL)', async () => {
    const pragma = async (name: string) => (await sql.raw<Record<string, unknown>>(`pragma ${name}`).execute(store.db)).rows[0]!;
    assert.deepEqual(await pragma('journal_mode'), { journal_mode: 'wal' });
    assert.deepEqual(await pragma('synchronous'), { synchronous: 2 });
  });

  it('bounds its page cache to PAGE_CACHE_KIB, not the driver\'s 16 MiB default', async () => {
    const { rows: [cache] } = await sql.raw<{ cache_size: number }>('pragma cache_size').execute(store.db);
    assert.deepEqual(cache, { cache_size: -PAGE_CACHE_KIB });
    assert.ok(PAGE_CACHE_KIB < 16_000);
  });

  it('waits for a lock another connection holds on a timer, not by sleeping: timers run meanwhile, and the write goes through once it is free', async () => {
    const other = await openSqliteConnection(opened.file!);
    try {
      other.exec('BEGIN IMMEDIATE');
      let ticks = 0;
      const ticking = setInterval(() => (ticks += 1), 5);
      const writing = sql`insert into store_health (id, checked_at) values (1, 'waited') on conflict (id) do update set checked_at = excluded.checked_at`.execute(store.db);
      await new Promise((resolve) => setTimeout(resolve, 100));
      clearInterval(ticking);
      assert.ok(ticks >= 3, `the event loop ran timers while the write waited (${ticks} ticks)`);
      other.exec('COMMIT');
      await writing;
      assert.deepEqual((await sql<{ checked_at: string }>`select checked_at from store_health`.execute(store.db)).rows, [{ checked_at: 'waited' }]);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });

  it('keeps the read model row and its version in step with the stream', async () => {
    const pet = await addPet(store, { name: 'Rex', categoryId: 2, status: 'pending' });
    assert.deepEqual(await getPet(store, pet.id), { pet, version: 1 });
    const row = await store.db.selectFrom('pets').selectAll().where('id', '=', pet.id).executeTakeFirstOrThrow();
    assert.equal(row.version, 1);
    assert.equal(row.status, 'pending');
  });

  it('looks a pet up by id on the connection itself, not through Kysely\'s queue, outside a transaction', async () => {
    const pet = await addPet(store, { name: 'Looked up', categoryId: 1, status: 'available' });
    const executeQuery = store.db.executeQuery.bind(store.db);
    let throughKysely = 0;
    store.db.executeQuery = ((query: Parameters<typeof executeQuery>[0]) => (throughKysely++, executeQuery(query))) as typeof store.db.executeQuery;
    try {
      const found = await store.catalog.get(pet.id);
      assert.deepEqual(found, { pet, version: 1 });
      assert.equal(throughKysely, 0);
    } finally {
      delete (store.db as { executeQuery?: unknown }).executeQuery;
    }
  });

  it('looks a pet up after a transaction open on the store\'s connection ends, never seeing its uncommitted rows', async () => {
    const pet = await addPet(store, { name: 'Before', categoryId: 1, status: 'available' });
    let lookup: Promise<unknown> | undefined;
    await assert.rejects(store.db.transaction().execute(async (transaction) => {
      await sql`update pets set name = 'Uncommitted' where id = ${pet.id}`.execute(transaction);
      lookup = store.catalog.get(pet.id);
      throw new Error('rolled back');
    }), /rolled back/);
    assert.deepEqual(await lookup, { pet, version: 1 });
  });

  it('keeps the id sequence at the last id a creation took', async () => {
    const pets = await Promise.all(Array.from({ length: 20 }, (_, index) => addPet(store, { name: `in sequence ${index}`, categoryId: 1 })));
    const ids = pets.map((pet) => pet.id);
    assert.equal(new Set(ids).size, 20);
    const sequence = await store.db.selectFrom('sequences').select('value').where('name', '=', 'pet_id').executeTakeFirstOrThrow();
    assert.equal(sequence.value, Math.max(...ids));
    assert.ok((await addPet(store, { name: 'after them', categoryId: 1 })).id > sequence.value);
  });

  it('keeps names with SQL metacharacters, emoji and RTL text exactly', async () => {
    for (const name of ["Robert'); DROP TABLE pets;--", '🐕‍🦺 Rex', 'שלום', '%_\\']) {
      const pet = await addPet(store, { name, categoryId: 1 });
      assert.equal((await getPet(store, pet.id)).pet.name, name);
    }
  });

  it('reads an event stored in an older shape (PetAdded v1, no status key) as today\'s', async () => {
    await store.db
      .insertInto('events')
      .values({
        stream_id: 'pet-424242',
        stream_version: 1,
        type: 'PetAdded',
        data: JSON.stringify({ id: 424242, name: 'Old', categoryId: 3 }),
        metadata: JSON.stringify({ schemaVersion: 1, recordedAt: '2026-11-21T12:00:00.000Z' }),
        recorded_at: '2026-11-21T12:00:00.000Z',
      })
      .execute();
    const stream = await store.eventStore.readStream('pet-424242');
    assert.deepEqual(stream.events[0]!.event, { type: 'PetAdded', data: { id: 424242, name: 'Old', categoryId: 3, status: null } });
    assert.equal(stream.events[0]!.metadata.schemaVersion, 1, 'the stored metadata is reported as written');
  });

  it('serves the filtered listing from the (status, id) index without sorting', async () => {
    const plan = await sql.raw<{ detail: string }>("explain query plan select id from pets where status = 'available' order by id limit 20").execute(store.db);
    const details = plan.rows.map((row) => row.detail).join(' | ');
    assert.match(details, /USING (COVERING )?INDEX pets_status_id/);
    assert.doesNotMatch(details, /TEMP B-TREE/);
  });

  it('answers StoreUnavailable, writing nothing, while another connection holds the write lock past the busy timeout', async () => {
    const other = await openSqliteConnection(opened.file);
    const before = await listPets(store, { limit: 100 });
    // The store's own connection waits 50 ms rather than its 5 s for this test; the error path is the same.
    await sql.raw('pragma busy_timeout = 50').execute(store.db);
    other.exec('BEGIN IMMEDIATE');
    try {
      await assert.rejects(addPet(store, { name: 'Blocked', categoryId: 1 }), StoreUnavailable);
    } finally {
      other.exec('ROLLBACK');
      other.close();
      await sql.raw(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`).execute(store.db);
    }
    assert.deepEqual(await listPets(store, { limit: 100 }), before);
  });

  it('records every migration once when reopened', async () => {
    const again = await openSqlitePetStore(opened.file);
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(again.db);
    await again.close();
    assert.deepEqual(applied.rows.map((row) => row.name), Object.keys(migrations).sort());
  });
});

describe('SQLite pet store, three processes starting at once on a new file', () => {
  it('migrates once and every process can write', async () => {
    const directory = temporaryDirectory('race');
    const file = directory.file('new.db');
    try {
      const outputs = await Promise.all([1, 2, 3].map(() => run(process.execPath, [...NODE_TS_ARGS, openAndAddPet, file])));
      const pets = outputs.map(({ stdout }) => JSON.parse(stdout) as { id: number });
      assert.deepEqual(pets.map((pet) => pet.id).sort(), [1, 2, 3]);
      const store = await openSqlitePetStore(file);
      const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(store.db);
      const listed = await listPets(store);
      await store.close();
      assert.equal(applied.rows.length, Object.keys(migrations).length);
      assert.equal(listed.length, 3);
    } finally {
      directory.remove();
    }
  });
});

describe('SQLite pet store, one file for Node and Deno', () => {
  it('opens and extends a file the other runtime wrote', async () => {
    const directory = temporaryDirectory('shared');
    const file = directory.file('shared.db');
    try {
      const { stdout } = await run(OTHER_RUNTIME.command, [...OTHER_RUNTIME.args, openAndAddPet, file]);
      const there = JSON.parse(stdout) as { id: number; name: string; categoryId: number };
      const store = await openSqlitePetStore(file);
      const here = await addPet(store, { name: 'here', categoryId: 2 });
      const listed = await listPets(store);
      await store.close();
      assert.equal(there.id, 1);
      assert.deepEqual(listed, [there, here]);
    } finally {
      directory.remove();
    }
  });
});
