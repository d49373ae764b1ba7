import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely } from 'kysely';
import type { SqliteDatabase } from 'kysely';
import { DatabaseUnusable } from '../database-unusable.ts';
import { migrateToLatest, pendingMigrations } from '../migrations.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { sqliteDriverForThisRuntime } from './sqlite-connection.ts';
import { openSqliteConnection } from './sqlite-driver.ts';
import type { SqliteConnection, SqliteDriverName } from './sqlite-connection.ts';
import { PetStoreSqliteDialect, whileBusy, withStatementCache } from './sqlite-kysely-dialect.ts';

export const BUSY_TIMEOUT_MS = 5000;

/**
 * Each connection's page cache, in KiB. better-sqlite3 builds SQLite with 16 MiB, which the writer fills
 * with the pages its creations wrote and the reader with whatever listings read; 4 MiB holds the
 * B-trees' upper levels and the pages being appended to, and a miss is a read from the OS's file cache.
 */
export const PAGE_CACHE_KIB = 4096;

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

export interface OpenSqliteOptions {
  readonly migrate?: boolean;
  readonly driver?: SqliteDriverName;
  /**
   * How long a statement waits for a lock another connection holds, once migrated (default BUSY_TIMEOUT_MS).
   * The pet store gives 0: SQLite waits by sleeping on the calling thread, which would freeze the event
   * loop and, with it, the store's writer holding the lock; statements run through Kysely then wait
   * up to BUSY_TIMEOUT_MS on a timer instead (`whileBusy`).
   */
  readonly busyTimeoutMs?: number;
  /**
   * Runs SQLite's `PRAGMA quick_check(1)` before anything else and refuses a damaged file. It reads every
   * page once (about 55 ms for a 100,000-pet, 42 MB file here) but skips the index-to-table
   * cross-checks of `integrity_check` (about 150 ms there), which `petstore check` runs.
   */
  readonly checkAtOpen?: boolean;
  /** After migrating, the connection only reads (`PRAGMA query_only`): for a store whose writes commit on another connection. */
  readonly readsOnly?: boolean;
}

/**
 * Opens (and creates) the SQLite file with the settings every connection needs, then migrates it.
 * Durability: WAL with synchronous=FULL, so a commit is on disk before it returns. The driver is the
 * one this runtime offers (better-sqlite3 on Node, node:sqlite on Deno); both get the same settings.
 */
export async function openSqlite(path: string, options: OpenSqliteOptions = {}): Promise<OpenedSqlite> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const driver = options.driver ?? sqliteDriverForThisRuntime();
  const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  // busy_timeout first: switching to WAL on a new file takes a lock another starting process may hold.
  const current = await openWhenFree(path, driver).catch((error: unknown) => {
    throw unusable(path, 'cannot be opened', error);
  });
  if (options.checkAtOpen) {
    let problems: string[];
    try {
      problems = checkPages(current, 'quick_check(1)');
    } catch (error) {
      current.close();
      throw unusable(path, 'cannot be read', error);
    }
    if (problems.length > 0) {
      current.close();
      throw new DatabaseUnusable(`the database ${path} (PETSTORE_DATABASE) is damaged: ${problems[0]!.replace(/\s*\n\s*/g, ' ')}; run \`petstore check\` for the full report, and restore it from a backup`);
    }
  }
  const raw: SqliteConnection = {
    prepare: (text) => current.prepare(text),
    exec: (text) => current.exec(text),
    get inTransaction() {
      return current.inTransaction;
    },
    close: () => current.close(),
  };
  const database = withStatementCache(raw);
  // A connection that only reads never takes the write lock once migrated (the migration holds it): nothing to wait for.
  const waitsForLock = busyTimeoutMs === 0 && !options.readsOnly;
  const db = new Kysely<PetStoreDatabase>({
    dialect: new PetStoreSqliteDialect({ database, ...(waitsForLock ? { lockWaitMs: BUSY_TIMEOUT_MS } : {}) }),
  });
  try {
    if (options.migrate !== false) await migrateExclusively(db, raw);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  if (busyTimeoutMs !== BUSY_TIMEOUT_MS) current.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  if (options.readsOnly) current.exec('PRAGMA query_only = true');
  return {
    db,
    raw,
    driver,
    database,
  };
}

/**
 * SQLite's own check of every page (`integrity_check`, or the cheaper `quick_check`, with an optional
 * bound on the problems reported): the problems it names, none when the file is sound.
 */
export function checkPages(connection: Pick<SqliteConnection, 'prepare'>, pragma: string): string[] {
  const rows = connection.prepare(`pragma ${pragma}`).all([]) as Record<string, string>[];
  const problems = rows.map((row) => String(Object.values(row)[0]));
  return problems.length === 1 && problems[0] === 'ok' ? [] : problems;
}

function unusable(path: string, what: string, error: unknown): DatabaseUnusable {
  const code = (error as { code?: unknown }).code;
  const reason = `${(error as Error).message}${typeof code === 'string' ? ` (${code})` : ''}`;
  return new DatabaseUnusable(`the database ${path} (PETSTORE_DATABASE) ${what}: ${reason}`, { cause: error });
}

/**
 * Opens with the busy timeout, and tries again for as long when SQLite answers busy all the same: a
 * file another process left mid-write (killed) is recovered under a lock that SQLite does not wait for.
 */
function openWhenFree(path: string, driver: SqliteDriverName): Promise<SqliteConnection> {
  return whileBusy(() => openConfigured(path, driver, BUSY_TIMEOUT_MS), BUSY_TIMEOUT_MS);
}

/** Opens a connection with the settings every connection needs: WAL, synchronous=FULL, foreign keys, the busy timeout, the page cache's bound. */
export async function openConfigured(path: string, driver: SqliteDriverName, busyTimeoutMs: number): Promise<SqliteConnection> {
  const connection = await openSqliteConnection(path, driver);
  try {
    connection.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    connection.exec('PRAGMA journal_mode = WAL');
    connection.exec('PRAGMA synchronous = FULL');
    connection.exec('PRAGMA foreign_keys = ON');
    connection.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`);
  } catch (error) {
    connection.close();
    throw error;
  }
  return connection;
}

/** What the migration lock needs from a connection; both drivers have it. */
export type MigrationLockConnection = Pick<SqliteConnection, 'exec' | 'inTransaction'>;

/**
 * Kysely's Migrator takes no lock on SQLite. Holding the write lock (BEGIN IMMEDIATE) for the whole
 * run makes processes that start together on a new file apply the migrations one after another:
 * the first migrates, the others wait on the busy timeout and then find nothing left to do.
 */
export async function migrateExclusively(db: Kysely<any>, raw: MigrationLockConnection): Promise<void> {
  // Nothing to apply needs no lock: a file this process may only read still opens (and serves reads).
  if ((await pendingMigrations(db)).length === 0) return;
  raw.exec('BEGIN IMMEDIATE');
  try {
    await migrateToLatest(db);
    raw.exec('COMMIT');
  } catch (error) {
    if (raw.inTransaction) raw.exec('ROLLBACK');
    throw error;
  }
}
