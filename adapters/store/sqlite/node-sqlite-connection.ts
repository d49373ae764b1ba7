import type { SqliteStatement } from 'kysely';
import type { SqliteConnection } from './sqlite-connection.ts';
import { sqliteResultCodeName } from './sqlite-result-codes.ts';

// The part of node:sqlite used here, described by hand: @types/node 20 has no node:sqlite.
export interface NodeSqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): NodeSqliteStatement;
  close(): void;
  readonly isTransaction: boolean;
}

interface NodeSqliteStatement {
  columns(): unknown[];
  all(...parameters: unknown[]): object[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): Iterator<object>;
}

interface NodeSqliteModule {
  DatabaseSync: new (path: string) => NodeSqliteDatabase;
  backup(source: NodeSqliteDatabase, path: string, options?: { rate?: number }): Promise<number>;
}

function nodeSqlite(): NodeSqliteModule {
  const sqlite = process.getBuiltinModule('node:sqlite') as NodeSqliteModule | undefined;
  if (sqlite === undefined) throw new Error('this runtime has no node:sqlite module; run on Deno 2, or on Node with better-sqlite3');
  return sqlite;
}

/** Opens the file with the runtime's built-in `node:sqlite` (Deno has it; Node 20 does not). */
export function openNodeSqliteConnection(path: string): SqliteConnection {
  const { DatabaseSync } = nodeSqlite();
  return wrapNodeSqlite(new DatabaseSync(path));
}

/**
 * Copies the store at `source` into a new file at `target` with SQLite's online backup (Deno's
 * node:sqlite allows no attached database, so no `VACUUM INTO`). All pages go in one step, inside
 * one read transaction: the copy is the store as of one commit, and writers are never blocked.
 */
export async function backupWithNodeSqlite(source: string, target: string, busyTimeoutMs: number): Promise<void> {
  const sqlite = nodeSqlite();
  const database = new sqlite.DatabaseSync(source);
  try {
    database.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    await sqlite.backup(database, target, { rate: 2 ** 30 });
  } finally {
    database.close();
  }
}

/**
 * node:sqlite as better-sqlite3 behaves towards Kysely and the store:
 * - statements get a `reader` flag (true when the statement yields columns, as better-sqlite3 decides it);
 * - Kysely's parameter array is spread into node:sqlite's positional arguments;
 * - rows are plain objects rather than null-prototype ones;
 * - an error's `code` names its SQLite result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`), not
 *   `ERR_SQLITE_ERROR`. Deno's `exec` errors carry no result code and keep theirs; only pragmas and the
 *   migration lock go through `exec`.
 * Integers come back as numbers unless a statement asks for BigInt, as with better-sqlite3.
 */
export function wrapNodeSqlite(database: NodeSqliteDatabase): SqliteConnection {
  return {
    prepare: (sql) => wrapStatement(withResultCodeName(() => database.prepare(sql))),
    exec: (sql) => withResultCodeName(() => database.exec(sql)),
    get inTransaction() {
      return database.isTransaction;
    },
    close: () => database.close(),
  };
}

function wrapStatement(statement: NodeSqliteStatement): SqliteStatement {
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => withResultCodeName(() => statement.all(...parameters).map(plainRow)),
    run: (parameters) => withResultCodeName(() => statement.run(...parameters)),
    *iterate(parameters) {
      const rows = withResultCodeName(() => statement.iterate(...parameters));
      try {
        for (;;) {
          const next = withResultCodeName(() => rows.next());
          if (next.done) return;
          yield plainRow(next.value);
        }
      } finally {
        rows.return?.();
      }
    },
  };
}

function plainRow(row: object): object {
  return { ...row };
}

function withResultCodeName<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    const resultCode = (error as { errcode?: unknown } | null)?.errcode;
    if (typeof resultCode === 'number') (error as { code?: string }).code = sqliteResultCodeName(resultCode);
    throw error;
  }
}
