import { CompiledQuery, sql } from 'kysely';
import { StoreUnavailable } from '../../../application/index.ts';
import { EVENTS, rowValues, sqliteInsert } from '../schema.ts';
import type { SqlDialect } from '../sql-dialect.ts';
import { readLogEnd, readSqliteLogPage, SQLITE_LOG_PAGE } from '../sql-event-log.ts';
import { readLogOnThread } from './log-reader-thread.ts';
import { BUSY_TIMEOUT_MS } from './open-sqlite.ts';
import { sqliteDriverForThisRuntime } from './sqlite-connection.ts';

/** The kinds of failure that are the machine's, not the request's: each answered 503 with `Retry-After`. */
export type SqliteFault = 'busy' | 'full' | 'io' | 'unwritable' | 'damaged';

const FAULT_MESSAGES: Record<SqliteFault, string> = {
  busy: 'the database is busy; try again',
  full: 'the database\'s disk is full; try again later',
  io: 'the database\'s disk failed to read or write; try again later',
  unwritable: 'the database file cannot be written; try again later',
  damaged: 'the database file is damaged; the operator has been told',
};

/** A write that waited its whole bound for the write lock another connection holds. */
export function lockWaitedTooLong(): StoreUnavailable {
  return new StoreUnavailable(FAULT_MESSAGES.busy, { retryAfterSeconds: 1 });
}

/** Which machine fault a SQLite error (of either driver) is, by its result code; undefined for any other error. */
export function sqliteFault(error: unknown): SqliteFault | undefined {
  const code = sqliteErrorCode(error);
  if (code === undefined) return undefined;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (code === 'SQLITE_FULL') return 'full';
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_NOMEM') return 'io';
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_PERM') return 'unwritable';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'damaged';
  return undefined;
}

/** The SQLite result code name an error carries (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`, ...), also when wrapped as a fault. */
export function sqliteErrorCode(error: unknown): string | undefined {
  const cause = error instanceof StoreUnavailable ? error.cause : error;
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** Events from which reading the log on a thread of its own pays for starting one. */
const READ_AHEAD_FROM = 10_000;

/**
 * SQLite: one writer at a time. Every write transaction begins IMMEDIATE (see `sqlite-dialect.ts`),
 * so an append's read of the stream version cannot go stale before its insert, and positions are
 * handed out in commit order without anything further.
 */
export const sqliteSqlDialect: SqlDialect = {
  name: 'sqlite',

  translateError(error) {
    const fault = sqliteFault(error);
    if (fault === undefined || error instanceof StoreUnavailable) return error;
    return new StoreUnavailable(FAULT_MESSAGES[fault], { cause: error, retryAfterSeconds: fault === 'busy' ? 1 : 5 });
  },

  isUniqueViolation(error, constraint) {
    // SQLite names the columns rather than the constraint.
    const { code, message } = error as { code?: unknown; message?: unknown };
    const [expectedCode, columns] = constraint.endsWith('_pkey')
      ? ['SQLITE_CONSTRAINT_PRIMARYKEY', `${constraint.slice(0, -'_pkey'.length)}.id`]
      : ['SQLITE_CONSTRAINT_UNIQUE', EVENTS.unique.events_stream_version_unique.map((column) => `events.${column}`).join(', ')];
    return code === expectedCode && typeof message === 'string' && message.endsWith(`constraint failed: ${columns}`);
  },

  async beginExclusive(connection) {
    await sql`begin immediate`.execute(connection);
  },

  async insertRows(executor, table, rows, into = table.name) {
    // Compiled by hand: Kysely's compiler would spend longer on thousands of values than SQLite does.
    if (rows.length > 0) await executor.executeQuery(CompiledQuery.raw(sqliteInsert(table, rows.length, into), rowValues(table, rows as never)));
  },

  selectForUpdate: (query) => query,

  async holdKey() {},

  async beginSnapshot(connection) {
    // A deferred transaction reads one snapshot from its first read on (WAL).
    await sql`begin`.execute(connection);
  },

  async swapIn(connection, table, from) {
    await sql.raw(`drop table ${table.name}`).execute(connection);
    await sql.raw(`alter table ${from} rename to ${table.name}`).execute(connection);
    for (const [name, columns] of Object.entries(table.indexes ?? {})) {
      await sql.raw(`create index ${name} on ${table.name} (${columns.join(', ')})`).execute(connection);
    }
  },

  readLogPage: readSqliteLogPage,

  async readLogAhead(db, afterPosition, limit) {
    const { rows } = await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db);
    const { file } = rows[0]!;
    const events = (await readLogEnd(db, sqliteSqlDialect)) - afterPosition;
    // An in-memory database has no file to open again; Deno's driver is node:sqlite, which the thread does not load.
    if (file === '' || sqliteDriverForThisRuntime() !== 'better-sqlite3' || events < READ_AHEAD_FROM) return undefined;
    return readLogOnThread({ file, pageSql: SQLITE_LOG_PAGE, afterPosition, limit, busyTimeoutMs: BUSY_TIMEOUT_MS });
  },
};
