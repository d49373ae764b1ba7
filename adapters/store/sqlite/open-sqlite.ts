import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely } from 'kysely';
import type { SqliteDatabase } from 'kysely';
import { migrateToLatest } from '../migrations.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { openSqliteConnection, sqliteDriverForThisRuntime } from './sqlite-connection.ts';
import type { SqliteConnection, SqliteDriverName } from './sqlite-connection.ts';
import { PetStoreSqliteDialect, withStatementCache } from './sqlite-kysely-dialect.ts';

export const BUSY_TIMEOUT_MS = 5000;

export interface OpenedSqlite {
  readonly db: Kysely<PetStoreDatabase>;
  /** The raw connection, for the few things Kysely cannot express (locking the whole migration run). */
  readonly raw: SqliteConnection;
  readonly driver: SqliteDriverName;
  /**
   * The same connection behind Kysely's narrow `SqliteDatabase` interface (with the statement cache), for
   * hot paths that run prepared statements synchronously; run them while holding Kysely's connection.
   */
  readonly database: SqliteDatabase;
}

/**
 * Opens (and creates) the SQLite file with the settings every connection needs, then migrates it.
 * Durability: WAL with synchronous=FULL, so a commit is on disk before it returns. The driver is the
 * one this runtime offers (better-sqlite3 on Node, node:sqlite on Deno); both get the same settings.
 */
export async function openSqlite(
  path: string,
  options: { migrate?: boolean; driver?: SqliteDriverName } = {},
): Promise<OpenedSqlite> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const driver = options.driver ?? sqliteDriverForThisRuntime();
  const raw = await openSqliteConnection(path, driver);
  // busy_timeout first: switching to WAL on a new file takes a lock another starting process may hold.
  raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = FULL');
  raw.exec('PRAGMA foreign_keys = ON');
  const database = withStatementCache(raw);
  const db = new Kysely<PetStoreDatabase>({ dialect: new PetStoreSqliteDialect({ database }) });
  if (options.migrate !== false) await migrateExclusively(db, raw);
  return { db, raw, driver, database };
}

/** What the migration lock needs from a connection; both drivers have it. */
export type MigrationLockConnection = Pick<SqliteConnection, 'exec' | 'inTransaction'>;

/**
 * Kysely's Migrator takes no lock on SQLite. Holding the write lock (BEGIN IMMEDIATE) for the whole
 * run makes processes that start together on a new file apply the migrations one after another:
 * the first migrates, the others wait on the busy timeout and then find nothing left to do.
 */
export async function migrateExclusively(db: Kysely<any>, raw: MigrationLockConnection): Promise<void> {
  raw.exec('BEGIN IMMEDIATE');
  try {
    await migrateToLatest(db);
    raw.exec('COMMIT');
  } catch (error) {
    if (raw.inTransaction) raw.exec('ROLLBACK');
    throw error;
  }
}
