import type { SqliteDatabase } from 'kysely';

/**
 * What the store needs from a SQLite driver: Kysely's `prepare` and `close`, plus `exec` and
 * `inTransaction` for the few statements Kysely cannot express (pragmas, locking the migration run).
 * A better-sqlite3 database has all four as they are; node:sqlite gets them through a thin wrapper.
 */
export interface SqliteConnection extends SqliteDatabase {
  /** Runs SQL that returns nothing the caller needs. */
  exec(sql: string): void;
  readonly inTransaction: boolean;
}

export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite';

/**
 * better-sqlite3 is an addon built against Node's own V8 interface, which only Node can load; Deno
 * offers `node:sqlite` instead (Node 20 does not). Node keeps better-sqlite3 on every version, so
 * a Node deployment runs the driver its tests run.
 */
export function sqliteDriverForThisRuntime(): SqliteDriverName {
  return process.versions.deno === undefined ? 'better-sqlite3' : 'node:sqlite';
}
