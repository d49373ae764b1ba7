import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { SqliteDatabase } from 'kysely';
import { migrateToLatest } from './migrations.ts';
import type { PetStoreDatabase } from './schema.ts';
import { PetStoreSqliteDialect, withStatementCache } from './sqlite-dialect.ts';

export const BUSY_TIMEOUT_MS = 5000;

export interface OpenedSqlite {
  readonly db: Kysely<PetStoreDatabase>;
  /** The raw connection, for the few things Kysely cannot express (locking the whole migration run). */
  readonly raw: Database.Database;
  /**
   * The same connection behind Kysely's narrow `SqliteDatabase` interface (with the statement cache), for
   * hot paths that run prepared statements synchronously; run them while holding Kysely's connection.
   */
  readonly database: SqliteDatabase;
}

/**
 * Opens (and creates) the SQLite file with the settings every connection needs, then migrates it.
 * Durability: WAL with synchronous=FULL, so a commit is on disk before it returns.
 */
export async function openSqlite(path: string, options: { migrate?: boolean } = {}): Promise<OpenedSqlite> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new Database(path);
  // busy_timeout first: switching to WAL on a new file takes a lock another starting process may hold.
  raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  const database = withStatementCache(raw as unknown as SqliteDatabase);
  const db = new Kysely<PetStoreDatabase>({ dialect: new PetStoreSqliteDialect({ database }) });
  if (options.migrate !== false) await migrateExclusively(db, raw);
  return { db, raw, database };
}

/**
 * Kysely's Migrator takes no lock on SQLite. Holding the write lock (BEGIN IMMEDIATE) for the whole
 * run makes processes that start together on a new file apply the migrations one after another:
 * the first migrates, the others wait on the busy timeout and then find nothing left to do.
 */
export async function migrateExclusively(db: Kysely<any>, raw: Database.Database): Promise<void> {
  raw.exec('BEGIN IMMEDIATE');
  try {
    await migrateToLatest(db);
    raw.exec('COMMIT');
  } catch (error) {
    if (raw.inTransaction) raw.exec('ROLLBACK');
    throw error;
  }
}
