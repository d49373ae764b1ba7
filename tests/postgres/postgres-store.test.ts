import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { PostgresPool } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { addPet, getPet, IdempotencyKeyTaken, StoreUnavailable, StreamVersionConflict } from '../../application/index.ts';
import type { PetEvent } from '../../domain/index.ts';
import { createPostgresPetStore } from '../../adapters/store/postgres/postgres-pet-store.ts';
import { createPostgresPool, parseSafeInteger } from '../../adapters/store/postgres/postgres-pool.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import type { PetStoreDatabase } from '../../adapters/store/schema.ts';
import { postgresSqlDialect } from '../../adapters/store/postgres/postgres-sql-dialect.ts';
import { migrations } from '../../adapters/store/migrations.ts';
import { createTestDatabase, testPostgresEngine } from '../support/postgres.ts';
import { pgliteAsPool } from '../support/pglite-pool.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';
import { appendAsUseCase, appendPet, createPet } from '../support/append-as-use-case.ts';
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
    const [stored] = await opened.store.eventLog.readLog({ after: 0, limit: 1 });
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
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => appendAsUseCase(opened.store.eventStore)(`pet-${pet.id}`, 1, [change], metadata)));
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
    // A row of `pets` without events under the id the second creation will be given: the plan sees a new
    // stream, the database's key refuses its row.
    const { rows: [drawn] } = await sql<{ id: number }>`select nextval('pet_ids') as id`.execute(opened.store.db);
    const taken = drawn!.id + 2;
    await sql`insert into pets (id, name, category_id, status, version, created_at, updated_at) values (${taken}, 'squatter', 1, null, 1, '', '')`.execute(opened.store.db);
    const added = (id: number): PetEvent => ({ type: 'PetAdded', data: { id, name: `pet ${id}`, categoryId: 1, status: 'available' } });
    const creation = (id: number) => ({ streamId: `pet-${id}`, events: [added(id)], metadata, options: { petAfter: { id, name: `pet ${id}`, categoryId: 1, status: 'available' as const } } });
    const built: number[] = [];
    // Asked for in one turn: one group.
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => createPet(opened.store.eventStore, (id) => (built.push(id), creation(id)))));
    const ids = [drawn!.id + 1, taken, drawn!.id + 3];
    assert.deepEqual(built.slice(0, 3), ids, 'the group drew the ids in the order asked');
    assert.equal(outcomes[0]!.status, 'fulfilled');
    assert.equal(outcomes[2]!.status, 'fulfilled');
    const refused = outcomes[1]!;
    assert.ok(refused.status === 'rejected' && refused.reason instanceof StreamVersionConflict, String((refused as PromiseRejectedResult).reason));
    const created = [outcomes[0]!, outcomes[2]!].map((outcome) => (outcome as PromiseFulfilledResult<{ id: number }>).value.id);
    assert.deepEqual(created, [ids[0], ids[2]], 'each run again alone, under the id it was drawn');
    for (const id of created) assert.equal((await getPet(opened.store, id)).pet.name, `pet ${id}`);
    assert.equal((await opened.store.eventStore.readStream(`pet-${taken}`)).version, 0);
  });

  it('says it is ready while the database answers', async () => {
    assert.equal(await opened.store.ready(), true);
  });
});

/** A store on a new database whose connections count the statements they send. */
async function openCountingStore(): Promise<{ store: SqlPetStore; statements: () => number; close(): Promise<void> }> {
  let statements = 0;
  const wrapped = new WeakSet<object>();
  const counting = (pool: PostgresPool): PostgresPool => ({
    async connect() {
      const client = await pool.connect();
      if (wrapped.has(client)) return client;
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      return Object.assign(client, { query: (...args: unknown[]) => (statements++, query(...args)) });
    },
    end: () => pool.end(),
  });
  if (testPostgresEngine() === 'pglite') {
    const pool = pgliteAsPool(new PGlite({ parsers: { 20: parseSafeInteger } }));
    const store = await createPostgresPetStore(new Kysely<PetStoreDatabase>({ dialect: new PostgresDialect({ pool: counting(pool) }) }));
    return { store, statements: () => statements, close: () => store.close() };
  }
  const database = await createTestDatabase();
  const pool = createPostgresPool({ url: database.url, poolSize: 4, statementTimeoutMs: 10_000 });
  const store = await createPostgresPetStore(new Kysely<PetStoreDatabase>({ dialect: new PostgresDialect({ pool: counting(pool as unknown as PostgresPool) }) }));
  return { store, statements: () => statements, close: async () => { await store.close(); await database.drop(); } };
}

describe(`a group of appends on PostgreSQL (${testPostgresEngine()})`, () => {
  let opened: Awaited<ReturnType<typeof openCountingStore>>;
  before(async () => {
    opened = await openCountingStore();
  });
  after(() => opened.close());

  const added = (id: number): PetEvent => ({ type: 'PetAdded', data: { id, name: `pet ${id}`, categoryId: 1, status: 'available' } });
  const sold = (id: number): PetEvent => ({ type: 'PetStatusChanged', data: { id, from: 'available', to: 'sold' } });
  const record = (id: number, key: string, expiresAt: string) => ({ scope: 'k', key, fingerprint: '{}', answer: { id, name: `pet ${id}`, categoryId: 1 }, expiresAt });
  /** The statements sent while `work` runs. */
  const counted = async (work: () => Promise<unknown>) => {
    const before = opened.statements();
    await work();
    return opened.statements() - before;
  };

  it('sends as many statements for forty appends as for one, creations and changes alike', async () => {
    const eventStore = { ...opened.store.eventStore, append: appendAsUseCase(opened.store.eventStore) };
    const creation = (id: number) => ({ streamId: `pet-${id}`, events: [added(id)], metadata, options: { petAfter: { id, name: `pet ${id}`, categoryId: 1, status: 'available' as const } } });
    let alone = 0;
    const oneCreation = await counted(async () => (alone = (await createPet(eventStore, creation)).id));
    // Asked for in one turn: one group, whose ids come with its positions, in no statement of their own.
    let many: number[] = [];
    const manyCreations = await counted(async () => (many = (await Promise.all(Array.from({ length: 40 }, () => createPet(eventStore, creation)))).map((created) => created.id)));
    assert.equal(manyCreations, oneCreation);
    const ids = [alone, ...many];
    const far = '2999-01-01T00:00:00.000Z';
    // As the use case appends a change, having read the stream (not counted here).
    const sell = (id: number) => appendPet(opened.store.eventStore, `pet-${id}`, 1, [sold(id)], metadata, {
      petAfter: { id, name: `pet ${id}`, categoryId: 1, status: 'sold' }, remember: record(id, `one ${id}`, far),
    });
    const oneChange = await counted(() => sell(alone));
    const manyChanges = await counted(() => Promise.all(many.map(sell)));
    assert.equal(manyChanges, oneChange);
    assert.ok(oneChange <= 5, `${oneChange} statements: begin, the lock and positions, the reads, the write, commit`);
    // Creations with changes in one group: the changes' reads, and nothing more.
    const mixed = await counted(() => Promise.all([
      ...Array.from({ length: 10 }, () => createPet(eventStore, creation)),
      appendPet(opened.store.eventStore, `pet-${alone}`, 2, [{ type: 'PetStatusChanged', data: { id: alone, from: 'sold', to: 'available' } }], metadata, {
        petAfter: { id: alone, name: `pet ${alone}`, categoryId: 1, status: 'available' }, remember: record(alone, `mixed ${alone}`, far),
      }),
    ]));
    assert.equal(mixed, oneChange);
    await eventStore.append(`pet-${alone}`, 3, [{ type: 'PetStatusChanged', data: { id: alone, from: 'available', to: 'sold' } }], metadata);
    for (const id of ids) assert.equal((await getPet(opened.store, id)).pet.status, 'sold');
  });

  it('shows a later append of a group what the earlier ones wrote', async () => {
    const { idempotencyKeys } = opened.store;
    const eventStore = { ...opened.store.eventStore, append: appendAsUseCase(opened.store.eventStore) };
    const { rows: drawn } = await sql<{ id: number }>`select nextval('pet_ids') as id from generate_series(1, 3)`.execute(opened.store.db);
    const [id, other, third] = drawn.map((row) => row.id) as [number, number, number];
    const far = '2999-01-01T00:00:00.000Z';
    // An expired record of a key: replaced by the group's.
    await eventStore.append(`pet-${third}`, 'no_stream', [added(third)], metadata, { remember: record(third, 'expired', '2000-01-01T00:00:00.000Z') });
    const outcomes = await Promise.allSettled([
      eventStore.append(`pet-${id}`, 'no_stream', [added(id)], metadata, { remember: record(id, 'shared', far) }),
      eventStore.append(`pet-${id}`, 1, [sold(id)], metadata),
      eventStore.append(`pet-${id}`, 1, [sold(id)], metadata),
      eventStore.append(`pet-${other}`, 'no_stream', [added(other)], metadata, { remember: record(other, 'shared', far) }),
      eventStore.append(`pet-${third}`, 1, [sold(third)], metadata, { remember: record(third, 'expired', far) }),
    ]);
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    const [, , conflict, taken] = outcomes as PromiseRejectedResult[];
    assert.ok(conflict!.reason instanceof StreamVersionConflict && conflict!.reason.actual === 2, String(conflict!.reason));
    assert.ok(taken!.reason instanceof IdempotencyKeyTaken, String(taken!.reason));
    assert.deepEqual(await getPet(opened.store, id), { pet: { id, name: `pet ${id}`, categoryId: 1, status: 'sold' }, version: 2 });
    assert.deepEqual((await eventStore.readStream(`pet-${other}`)).version, 0, 'the refused append wrote nothing');
    assert.equal(await opened.store.catalog.get(other), undefined);
    assert.deepEqual(await idempotencyKeys.find('k', 'expired', new Date()), record(third, 'expired', far));
    const positions = (await opened.store.eventLog.readLog({ after: 0, limit: 100 })).map((stored) => stored.position);
    assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
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
