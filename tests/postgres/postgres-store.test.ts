import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { addPet, getPet, StoreUnavailable, StreamVersionConflict } from '../../application/index.ts';
import type { PetEvent } from '../../domain/index.ts';
import { parseSafeInteger } from '../../adapters/store/postgres/postgres-pool.ts';
import { postgresSqlDialect } from '../../adapters/store/postgres/postgres-sql-dialect.ts';
import { migrations } from '../../adapters/store/migrations.ts';
import { testPostgresEngine } from '../support/postgres.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';
import type { TemporaryPostgresStore } from '../support/temporary-store.ts';

const metadata = { recordedAt: '2026-11-22T00:00:00.000Z' };

describe(`PostgreSQL pet store (${testPostgresEngine()})`, () => {
  let opened: TemporaryPostgresStore;

  before(async () => {
    opened = await openTemporaryStore('postgres');
  });
  after(() => opened.close());

  it('records every migration once, by the same names as on SQLite', async () => {
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(opened.store.db);
    assert.deepEqual(applied.rows.map((row) => row.name), Object.keys(migrations).sort());
  });

  it('keeps ids, positions and categories in bigint columns and pet ids in a sequence', async () => {
    const columns = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema() and (table_name, column_name) in (('events', 'position'), ('pets', 'id'), ('pets', 'category_id'))
      order by table_name, column_name`.execute(opened.store.db);
    assert.deepEqual(columns.rows.map((row) => `${row.table_name}.${row.column_name} ${row.data_type}`), [
      'events.position bigint', 'pets.category_id bigint', 'pets.id bigint',
    ]);
    const sequences = await sql<{ sequencename: string }>`select sequencename from pg_sequences where sequencename = 'pet_ids'`.execute(opened.store.db);
    assert.equal(sequences.rows.length, 1);
  });

  it('reads 64-bit ids past 2^32 back as JavaScript numbers, exactly', async () => {
    await sql`select setval('pet_ids', ${2 ** 40})`.execute(opened.store.db);
    const pet = await addPet(opened.store, { name: 'Big', categoryId: 2 ** 53 - 1, status: 'available' });
    assert.equal(pet.id, 2 ** 40 + 1);
    const read = await getPet(opened.store, pet.id);
    assert.equal(typeof read.pet.id, 'number');
    assert.deepEqual(read, { pet: { id: 2 ** 40 + 1, name: 'Big', categoryId: 2 ** 53 - 1, status: 'available' }, version: 1 });
    const [stored] = await opened.store.eventStore.readAll(0, 1);
    assert.equal(typeof stored!.position, 'number');
  });

  it('refuses a bigint beyond 2^53-1 rather than rounding it', () => {
    assert.equal(parseSafeInteger('9007199254740991'), 2 ** 53 - 1);
    assert.throws(() => parseSafeInteger('9007199254740992'), RangeError);
    assert.throws(() => parseSafeInteger('-9007199254740993'), RangeError);
  });

  it('lets exactly one of many concurrent appends at one version win; the rest get StreamVersionConflict', async () => {
    const pet = await addPet(opened.store, { name: 'Contested', categoryId: 1, status: 'available' });
    const change: PetEvent = { type: 'PetStatusChanged', data: { id: pet.id, from: 'available', to: 'pending' } };
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => opened.store.eventStore.append(`pet-${pet.id}`, 1, [change], metadata)));
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    assert.equal(won.length, 1);
    for (const { reason } of lost) {
      assert.ok(reason instanceof StreamVersionConflict, String(reason));
      assert.equal(reason.actual, 2);
    }
    assert.equal((await opened.store.eventStore.readStream(`pet-${pet.id}`)).version, 2);
    assert.equal((await getPet(opened.store, pet.id)).version, 2);
  });

  it('answers an append the database refused alone, and commits the others of its group', async () => {
    // A row of `pets` without events: the plan sees a new stream, the database's key refuses its row.
    const taken = await opened.store.petIds.next();
    await sql`insert into pets (id, name, category_id, status, version, created_at, updated_at) values (${taken}, 'squatter', 1, null, 1, '', '')`.execute(opened.store.db);
    const added = (id: number): PetEvent => ({ type: 'PetAdded', data: { id, name: `pet ${id}`, categoryId: 1, status: 'available' } });
    const ids = [await opened.store.petIds.next(), taken, await opened.store.petIds.next()];
    // Asked for in one turn: one group.
    const outcomes = await Promise.allSettled(ids.map((id) => opened.store.eventStore.append(`pet-${id}`, 'no_stream', [added(id)], metadata)));
    assert.equal(outcomes[0]!.status, 'fulfilled');
    assert.equal(outcomes[2]!.status, 'fulfilled');
    const refused = outcomes[1]!;
    assert.ok(refused.status === 'rejected' && refused.reason instanceof StreamVersionConflict, String((refused as PromiseRejectedResult).reason));
    for (const id of [ids[0]!, ids[2]!]) assert.equal((await getPet(opened.store, id)).pet.name, `pet ${id}`);
    assert.equal((await opened.store.eventStore.readStream(`pet-${taken}`)).version, 0);
  });

  it('says it is ready while the database answers', async () => {
    assert.equal(await opened.store.ready(), true);
  });
});

describe('PostgreSQL failures in the application\'s words', () => {
  const unavailable = (error: unknown) => postgresSqlDialect.translateError(error) instanceof StoreUnavailable;
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('turns connection failures, shutdowns and timeouts into StoreUnavailable', () => {
    assert.ok(unavailable(withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')));
    assert.ok(unavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')));
    assert.ok(unavailable(withCode('57P01', 'terminating connection due to administrator command')));
    assert.ok(unavailable(withCode('57014', 'canceling statement due to statement timeout')));
    assert.ok(unavailable(withCode('08006')));
    assert.ok(unavailable(withCode('53300', 'sorry, too many clients already')));
    assert.ok(unavailable(new Error('Connection terminated unexpectedly')));
    assert.ok(unavailable(new Error('timeout exceeded when trying to connect')));
  });

  it('leaves every other failure as it is', () => {
    const violation = withCode('23505', 'duplicate key value violates unique constraint');
    assert.equal(postgresSqlDialect.translateError(violation), violation);
    assert.ok(!unavailable(withCode('42P01', 'relation "pets" does not exist')));
    assert.ok(!unavailable(new TypeError('x is undefined')));
  });
});
