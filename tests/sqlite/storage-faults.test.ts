import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, StoreUnavailable, StreamVersionConflict } from '../../application/index.ts';
import type { SqliteDatabase } from 'kysely';
import { openCommitMark } from '../../adapters/store/sqlite/sqlite-commits.ts';
import { createBatchWriter } from '../../adapters/store/sqlite/sqlite-batch-writer.ts';
import { createSqliteWrites } from '../../adapters/store/sqlite/sqlite-writes.ts';
import { openSqlite } from '../../adapters/store/sqlite/open-sqlite.ts';
import { postgresSqlDialect } from '../../adapters/store/postgres/postgres-sql-dialect.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import type { SqliteConnection } from '../../adapters/store/sqlite/sqlite-connection.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { sqliteSqlDialect } from '../../adapters/store/sqlite/sqlite-sql-dialect.ts';
import { openSqliteStoreBesideLockHolder, temporaryDirectory } from '../support/temporary-store.ts';
import { createPet } from '../support/append-as-use-case.ts';

const driverError = (code: string) => Object.assign(new Error(code.toLowerCase()), { code });

describe('storage faults in the application\'s words', () => {
  for (const [code, message, retryAfter] of [
    ['SQLITE_BUSY', /busy/, 1], ['SQLITE_LOCKED', /busy/, 1], ['SQLITE_FULL', /disk is full/, 5], ['SQLITE_IOERR_WRITE', /disk failed/, 5],
    ['SQLITE_IOERR_FSYNC', /disk failed/, 5], ['SQLITE_READONLY', /cannot be written/, 5], ['SQLITE_READONLY_DBMOVED', /cannot be written/, 5],
    ['SQLITE_CANTOPEN', /cannot be written/, 5], ['SQLITE_CORRUPT', /damaged/, 5], ['SQLITE_NOTADB', /damaged/, 5],
  ] as const) {
    it(`makes SQLite's ${code} a StoreUnavailable (Retry-After ${retryAfter} s) that keeps the driver's error`, () => {
      const error = driverError(code);
      const fault = sqliteSqlDialect.translateError(error);
      assert.ok(fault instanceof StoreUnavailable);
      assert.match(fault.message, message);
      assert.equal(fault.retryAfterSeconds, retryAfter);
      assert.equal(fault.cause, error);
    });
  }

  it('leaves the request\'s own failures to SQLite as they are (a constraint, a syntax error)', () => {
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'SQLITE_MISMATCH']) {
      const error = driverError(code);
      assert.equal(sqliteSqlDialect.translateError(error), error);
    }
  });

  it('makes PostgreSQL\'s full disk, I/O error and read-only server a StoreUnavailable', () => {
    for (const code of ['53100', '58030', '25006', '57P03', '08006']) {
      assert.ok(postgresSqlDialect.translateError(driverError(code)) instanceof StoreUnavailable, code);
    }
    const unique = driverError('23505');
    assert.equal(postgresSqlDialect.translateError(unique), unique);
  });
});

describe('SQLite writes while another connection holds the write lock', () => {
  let store: SqlitePetStore;
  let other: SqliteConnection;
  let close: () => Promise<void>;

  before(async () => {
    ({ store, other, close } = await openSqliteStoreBesideLockHolder('held-lock', { lockWaitMs: 300 }));
  });
  after(() => close());

  it('lets reads answer while a write waits, and commits the write once the lock is released', async () => {
    await addPet(store, { name: 'first', categoryId: 1 });
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const waiting = addPet(store, { name: 'waits', categoryId: 1 }).finally(() => (settled = true));
    const listed = await store.catalog.list({ limit: 10 });
    assert.deepEqual(listed.map((pet) => pet.name), ['first']);
    assert.equal(settled, false, 'the listing answered while the write waited');
    other.exec('COMMIT');
    assert.equal((await waiting).name, 'waits');
  });

  it('fails the waiting writes as busy once the lock stays taken past the wait, and reads go on', async () => {
    other.exec('BEGIN IMMEDIATE');
    try {
      const [one, two] = await Promise.allSettled([addPet(store, { name: 'a', categoryId: 1 }), addPet(store, { name: 'b', categoryId: 1 })]);
      for (const outcome of [one, two]) {
        assert.equal(outcome.status, 'rejected');
        assert.ok((outcome as PromiseRejectedResult).reason instanceof StoreUnavailable);
        assert.match((outcome as PromiseRejectedResult).reason.message, /busy/);
      }
      assert.equal((await store.catalog.list({ limit: 10 })).length, 2);
      assert.match((await store.checkWrites!())?.message ?? '', /busy/, 'writes known to fail');
    } finally {
      other.exec('COMMIT');
    }
    assert.equal((await addPet(store, { name: 'after', categoryId: 1 })).name, 'after');
    assert.equal(await store.checkWrites!(), undefined, 'a committed group clears the fault');
  });
});

describe('SQLite writes beside the log (consumer groups) while another connection holds the write lock', () => {
  it('are refused as busy within the wait from their arrival, like an append queued with them, not after the writes before them', async () => {
    const { store, other, close } = await openSqliteStoreBesideLockHolder('held-lock-aside', { lockWaitMs: 300 });
    try {
      const writes = store.writeOutsideLog!;
      other.exec('BEGIN IMMEDIATE');
      const append = addPet(store, { name: 'queued first', categoryId: 1 });
      const besides = [1, 2, 3].map((index) => writes(async (db) => db.insertInto('sequences').values({ name: `aside-${index}`, value: 0 }).execute()));
      const outcomes = Promise.allSettled(besides);
      await assert.rejects(append, StoreUnavailable);
      await besides[0]!.catch(() => undefined);
      // The lock is free again once the first is refused; the others arrived with it, so their wait is over too.
      other.exec('COMMIT');
      for (const outcome of await outcomes) {
        assert.equal(outcome.status, 'rejected');
        assert.match(String((outcome as PromiseRejectedResult).reason?.message), /busy|locked/);
      }
      assert.equal((await addPet(store, { name: 'after', categoryId: 1 })).name, 'after');
    } finally {
      await close();
    }
  });
});

describe('SQLite group commit when ending a failed group fails too', () => {
  it('opens another connection after a COMMIT and its ROLLBACK both failed, so the next group commits once the disk is back', async () => {
    const directory = temporaryDirectory('stuck-transaction');
    const file = directory.file('store.db');
    const { db } = await openSqlite(file);
    // The first connection fails its COMMIT and then its ROLLBACK, as a disk failing every write would.
    let connections = 0;
    const connect = async () => {
      connections += 1;
      const connection = await openSqliteConnection(file);
      const failing = connections === 1;
      const database: SqliteDatabase = {
        prepare: (text) => (failing && (text === 'commit' || text === 'rollback')
          ? { reader: false, all: () => [], iterate: () => [][Symbol.iterator](), run: () => { throw driverError('SQLITE_IOERR_WRITE'); } }
          : connection.prepare(text)),
        close: () => connection.close(),
      };
      const mark = openCommitMark(connection, file);
      return { database, mark, close() { mark.close(); connection.close(); } };
    };
    const writer = createBatchWriter({ connect, committed() {} });
    const group = async () => {
      await writer.begin();
      writer.drawIds('pet', 1);
      return writer.commit({ writes: [], writeHealthRow: true, now: '2026-11-24T12:00:00.000Z' });
    };
    try {
      const failure = await group().then(() => undefined, (error: unknown) => error);
      assert.ok(sqliteSqlDialect.translateError(failure) instanceof StoreUnavailable, `a store fault, not ${String(failure)}`);
      await group();
      assert.equal(connections, 2, 'the failed connection was given up for another');
      assert.equal((await db.selectFrom('store_health').select('checked_at').execute()).length, 1);
    } finally {
      writer.close();
      await db.destroy();
      directory.remove();
    }
  });
});

describe('SQLite group commit when drawing ids fails after some were given out', () => {
  it('fails every creation of a group whose draw of ids fails, and draws their ids again for the next group: none given twice, none skipped', async () => {
    const directory = temporaryDirectory('failed-draw');
    const file = directory.file('store.db');
    const { db } = await openSqlite(file);
    // The first draw of new ids fails, as a disk failing mid-group would.
    let draws = 0;
    const connect = async () => {
      const connection = await openSqliteConnection(file);
      const database: SqliteDatabase = {
        prepare: (text) => {
          const statement = connection.prepare(text);
          if (!/^(update|insert into) sequences/.test(text)) return statement;
          return { ...statement, run: (parameters: readonly unknown[]) => {
            draws += 1;
            if (draws === 1) throw driverError('SQLITE_IOERR_WRITE');
            return statement.run(parameters);
          } };
        },
        close: () => connection.close(),
      };
      const mark = openCommitMark(connection, file);
      return { database, mark, close() { mark.close(); connection.close(); } };
    };
    const writer = createBatchWriter({ connect, committed() {} });
    const writes = createSqliteWrites(writer, { now: () => new Date() }, { observeWrite: undefined, lockWaitMs: 1_000 });
    const create = async (name: string) => (await createPet(writes, (id) => {
      const pet = { id, name, categoryId: 1, status: 'available' as const };
      return { streamId: `pet-${id}`, events: [{ type: 'PetAdded', data: pet }], metadata: { recordedAt: new Date().toISOString() }, options: { petAfter: pet } };
    })).id;
    try {
      // Asked in one turn: one group, whose draw fails.
      for (const outcome of await Promise.allSettled([create('failed a'), create('failed b'), create('failed c')])) {
        assert.equal(outcome.status, 'rejected');
        assert.ok((outcome as PromiseRejectedResult).reason instanceof StoreUnavailable, `a store fault, not ${String((outcome as PromiseRejectedResult).reason)}`);
      }
      const after = await Promise.all([create('after 1'), create('after 2')]);
      await writes.drain();
      assert.deepEqual(await db.selectFrom('pets').select(['id', 'name']).orderBy('id').execute(), [{ id: 1, name: 'after 1' }, { id: 2, name: 'after 2' }]);
      assert.deepEqual(after, [1, 2]);
    } finally {
      await writes.drain();
      writer.close();
      await db.destroy();
      directory.remove();
    }
  });
});
