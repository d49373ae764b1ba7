import { CompiledQuery } from 'kysely';
import type { Kysely, SqliteDatabase } from 'kysely';
import type { Pet } from '../../../domain/index.ts';
import type { Clock, PetCatalog, PetQuery } from '../../../application/index.ts';
import { translated } from '../sql-dialect.ts';
import type { PetStoreDatabase, PetRow } from '../schema.ts';
import { createSqlPetStore } from '../sql-pet-store.ts';
import { petFromRow } from '../../../application/index.ts';
import { PET_FIELD_COLUMNS } from '../schema.ts';
import type { SqlPetStore } from '../sql-pet-store.ts';
import { createSqliteCommits, openCommitMark } from './sqlite-commits.ts';
import { createSqliteWrites } from './sqlite-writes.ts';
import { createBatchWriter } from './sqlite-batch-writer.ts';
import type { BatchWriterOptions, WriterConnection } from './sqlite-batch-writer.ts';
import { BUSY_TIMEOUT_MS, openConfigured, openSqlite } from './open-sqlite.ts';
import type { SqliteDriverName } from './sqlite-connection.ts';
import { whileBusy, withStatementCache } from './sqlite-kysely-dialect.ts';
import type { SqliteConnection } from './sqlite-connection.ts';
import { sqliteSqlDialect } from './sqlite-sql-dialect.ts';
import type { WriteObserver } from '../write/write-observer.ts';
import type { SqliteCommits } from './sqlite-commits.ts';

export interface SqlitePetStore extends SqlPetStore {
  /** Told synchronously: `refresh` looks at the file at once. */
  readonly commits: Pick<SqliteCommits, 'onCommitted' | 'refresh'>;
  /** See `SqliteWrites.writerPragma`: the connection the store's appends commit on is not `db`'s. */
  writerPragma(pragma: string): Promise<void>;
}

export interface SqlitePetStoreOptions {
  readonly clock?: Clock;
  readonly migrate?: boolean;
  readonly observeWrite?: WriteObserver | undefined;
  /** How long a group waits for the write lock another connection holds before its writes fail as busy (default BUSY_TIMEOUT_MS). */
  readonly lockWaitMs?: number;
  /** For tests: see `BatchWriterOptions.beforeCommit` and `beforeAnswer`. */
  readonly holdGroups?: Pick<BatchWriterOptions, 'beforeCommit' | 'beforeAnswer'>;
  /** See `OpenSqliteOptions.checkAtOpen`. */
  readonly checkAtOpen?: boolean;
  /**
   * The store's own connection only reads once migrated: every write goes through the store (its
   * groups and `writeOutsideLog`, on the writer's connection). A memory database writes on it all the same.
   */
  readonly readsOnly?: boolean;
}

/**
 * The pet store on one SQLite file, migrated unless `migrate` is false. The shared SQL store, with
 * SQLite's own write path (group commit: one transaction and one fsync for the appends and new
 * streams of one turn of the event loop), a precompiled listing, and a watch on the file that tells every commit.
 */
export async function openSqlitePetStore(path: string, options: SqlitePetStoreOptions = {}): Promise<SqlitePetStore> {
  const { db, raw, database, driver } = await openSqlite(path, {
    ...(options.migrate === undefined ? {} : { migrate: options.migrate }),
    // No statement sleeps waiting for a lock: the writer, on this event loop too, may be holding it.
    busyTimeoutMs: 0,
    ...(options.checkAtOpen === undefined ? {} : { checkAtOpen: options.checkAtOpen }),
    readsOnly: options.readsOnly === true && path !== ':memory:',
  });
  const clock = options.clock ?? { now: () => new Date() };
  const commits = createSqliteCommits(database, path);
  const writer = createBatchWriter({
    // A connection of the writer's own; only a memory database, which no other connection can open, writes on the store's.
    connect: path === ':memory:' ? async () => ({ database, mark: openCommitMark(database, path), close() {} }) : () => writerConnection(path, driver),
    committed: commits.committed,
    ...options.holdGroups,
  });
  const writes = createSqliteWrites(writer, clock, { observeWrite: options.observeWrite, lockWaitMs: options.lockWaitMs ?? BUSY_TIMEOUT_MS });
  const store = createSqlPetStore(db, sqliteSqlDialect, {
    clock,
    writes,
    commits,
    checkWrites: writes.checkWrites,
    list: precompiledListing(db),
    get: precompiledLookup(db, database, raw),
    async close() {
      await writes.drain();
      writer.close();
      commits.close();
      await db.destroy();
    },
  });
  return {
    ...store,
    commits,
    writerPragma: writes.writerPragma,
    // Told by the watch as the store's own commits that changed no pet: caches keep their answers, followers of the log sleep on.
    writeOutsideLog: writes.writeOutsideLog,
  };
}

/** The writer's connection: it waits for no lock, since waiting would sleep on the event loop (see sqlite-writes.ts). */
async function writerConnection(file: string, driver: SqliteDriverName): Promise<WriterConnection> {
  const database = withStatementCache(await openConfigured(file, driver, 0));
  try {
    const mark = openCommitMark(database, file);
    return {
      database,
      mark,
      close() {
        mark.close();
        database.close();
      },
    };
  } catch (error) {
    database.close();
    throw error;
  }
}

// Precompiled: the listing is the hot read, and building the query anew each time costs more than running it.
// `id > ?` with 0 for a listing from the start keeps one plan per filter.
const LIST_ALL = `select ${PET_FIELD_COLUMNS.join(', ')} from pets where id > ? order by id limit ?`;
const LIST_BY_STATUS = `select ${PET_FIELD_COLUMNS.join(', ')} from pets where status = ? and id > ? order by id limit ?`;

type PetListRow = Pick<PetRow, (typeof PET_FIELD_COLUMNS)[number]>;

const GET_ONE = `select ${PET_FIELD_COLUMNS.join(', ')}, version from pets where id = ?`;

/**
 * The lookup by id as precompiled SQL: what a read of one pet and an order's placement ask first. Run
 * on the connection directly, as one synchronous statement (Kysely's queue costs more than the read);
 * through Kysely while a transaction of its own is open there, whose rows the lookup must not see before its commit.
 */
function precompiledLookup(db: Kysely<PetStoreDatabase>, database: SqliteDatabase, connection: Pick<SqliteConnection, 'inTransaction'>): PetCatalog['get'] {
  const found = (rows: readonly (PetListRow & { version: number })[]) => {
    const row = rows[0];
    return row && { pet: petFromRow(row), version: row.version };
  };
  return (id: number) => translated(sqliteSqlDialect, async () => {
    if (connection.inTransaction) return found((await db.executeQuery<PetListRow & { version: number }>(CompiledQuery.raw(GET_ONE, [id]))).rows);
    // A read takes no lock, but may meet SQLite's busy while another process recovers the file after a crash.
    return found(await whileBusy(() => database.prepare(GET_ONE).all([id]) as (PetListRow & { version: number })[], BUSY_TIMEOUT_MS));
  });
}

/** The listing as precompiled SQL. */
function precompiledListing(db: Kysely<PetStoreDatabase>): PetCatalog['list'] {
  return async ({ status, limit, after = 0 }: PetQuery): Promise<Pet[]> => {
    const query = status === undefined
      ? CompiledQuery.raw(LIST_ALL, [after, limit])
      : CompiledQuery.raw(LIST_BY_STATUS, [status, after, limit]);
    const { rows } = await translated(sqliteSqlDialect, () => db.executeQuery<PetListRow>(query));
    return rows.map(petFromRow);
  };
}
