import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSqlite } from '../../adapters/store/sqlite/open-sqlite.ts';
import { sqliteDriverForThisRuntime } from '../../adapters/store/sqlite/sqlite-connection.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import type { SqliteConnection } from '../../adapters/store/sqlite/sqlite-connection.ts';
import { sqliteResultCodeName } from '../../adapters/store/sqlite/sqlite-result-codes.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';
import type { TemporaryDirectory } from '../support/temporary-store.ts';

/**
 * What the store relies on from a SQLite driver, checked on the driver this runtime runs:
 * better-sqlite3 as it is on Node, node:sqlite through its shims on Deno.
 */
const driver = sqliteDriverForThisRuntime();

describe(`SQLite connection (${driver})`, () => {
  let directory: TemporaryDirectory;
  let file: string;
  let connection: SqliteConnection;

  before(async () => {
    directory = temporaryDirectory('connection');
    file = directory.file('connection.db');
    connection = await openSqliteConnection(file);
    connection.exec('CREATE TABLE animals (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)');
  });
  after(() => {
    connection.close();
    directory.remove();
  });

  it('is node:sqlite on Deno and better-sqlite3 on Node', async () => {
    assert.equal(driver, process.versions.deno === undefined ? 'better-sqlite3' : 'node:sqlite');
    const opened = await openSqlite(':memory:');
    await opened.db.destroy();
    assert.equal(opened.driver, driver);
  });

  it('flags the statements that return rows as readers', () => {
    const reader = (sql: string) => connection.prepare(sql).reader;
    assert.equal(reader('SELECT id FROM animals'), true);
    assert.equal(reader("INSERT INTO animals (name) VALUES ('x') RETURNING id"), true);
    assert.equal(reader('PRAGMA busy_timeout'), true);
    assert.equal(reader("INSERT INTO animals (name) VALUES ('x')"), false);
    assert.equal(reader('UPDATE animals SET name = name'), false);
    assert.equal(reader('BEGIN IMMEDIATE'), false);
    assert.equal(reader('PRAGMA foreign_keys = ON'), false);
  });

  it('binds a parameter array as the positional parameters, in order', () => {
    const row = connection.prepare('SELECT ? AS a, ? AS b, ? AS c').all([1, 'two', null])[0];
    assert.deepEqual(row, { a: 1, b: 'two', c: null });
  });

  it('runs writes with their changes and new row id, as numbers', () => {
    const inserted = connection.prepare('INSERT INTO animals (name) VALUES (?)').run(['Rex']);
    assert.deepEqual(inserted, { changes: 1, lastInsertRowid: 1 });
    const renamed = connection.prepare('UPDATE animals SET name = ? WHERE id = ?').run(['Rex II', 1]);
    assert.equal(renamed.changes, 1);
  });

  it('returns rows as plain objects with integers as numbers', () => {
    const [row] = connection.prepare('SELECT id, name FROM animals WHERE id = ?').all([1]) as Record<string, unknown>[];
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    assert.deepEqual(row, { id: 1, name: 'Rex II' });
  });

  it('iterates rows in order, and a statement left early can run again', () => {
    connection.prepare('INSERT INTO animals (name) VALUES (?), (?)').run(['Tom', 'Kit']);
    const statement = connection.prepare('SELECT name FROM animals ORDER BY id');
    assert.deepEqual([...statement.iterate([])], [{ name: 'Rex II' }, { name: 'Tom' }, { name: 'Kit' }]);
    for (const row of statement.iterate([])) {
      assert.deepEqual(row, { name: 'Rex II' });
      break;
    }
    assert.equal(statement.all([]).length, 3);
  });

  it('reports whether a transaction is open', () => {
    assert.equal(connection.inTransaction, false);
    connection.exec('BEGIN IMMEDIATE');
    assert.equal(connection.inTransaction, true);
    connection.exec('ROLLBACK');
    assert.equal(connection.inTransaction, false);
  });

  it('names a duplicate key SQLITE_CONSTRAINT_UNIQUE and keeps SQLite\'s message', () => {
    assert.throws(() => connection.prepare('INSERT INTO animals (name) VALUES (?)').run(['Tom']), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'SQLITE_CONSTRAINT_UNIQUE');
      assert.match(error.message, /UNIQUE constraint failed: animals\.name/);
      return true;
    });
    assert.throws(() => connection.prepare('INSERT INTO animals (id, name) VALUES (?, ?)').run([1, 'Max']), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    assert.throws(() => connection.prepare('INSERT INTO animals (name) VALUES (?)').run([null]), { code: 'SQLITE_CONSTRAINT_NOTNULL' });
  });

  it('names a write lock held by another connection SQLITE_BUSY', async () => {
    const other = await openSqliteConnection(file);
    try {
      other.exec('PRAGMA busy_timeout = 0');
      connection.exec('BEGIN IMMEDIATE');
      assert.throws(() => other.prepare('BEGIN IMMEDIATE').run([]), { code: 'SQLITE_BUSY' });
    } finally {
      connection.exec('ROLLBACK');
      other.close();
    }
  });
});

describe('SQLite result code names', () => {
  it('names primary and extended codes as better-sqlite3 does', () => {
    assert.equal(sqliteResultCodeName(1), 'SQLITE_ERROR');
    assert.equal(sqliteResultCodeName(5), 'SQLITE_BUSY');
    assert.equal(sqliteResultCodeName(5 | (2 << 8)), 'SQLITE_BUSY_SNAPSHOT');
    assert.equal(sqliteResultCodeName(6), 'SQLITE_LOCKED');
    assert.equal(sqliteResultCodeName(19 | (8 << 8)), 'SQLITE_CONSTRAINT_UNIQUE');
    assert.equal(sqliteResultCodeName(19 | (6 << 8)), 'SQLITE_CONSTRAINT_PRIMARYKEY');
    assert.equal(sqliteResultCodeName(8 | (1 << 8)), 'SQLITE_READONLY_RECOVERY');
  });

  it('names an extended code outside its table by the primary code, and an unknown code as unknown', () => {
    assert.equal(sqliteResultCodeName(10 | (1 << 8)), 'SQLITE_IOERR');
    assert.equal(sqliteResultCodeName(19 | (40 << 8)), 'SQLITE_CONSTRAINT');
    assert.equal(sqliteResultCodeName(100), 'UNKNOWN_SQLITE_ERROR_100');
  });
});
