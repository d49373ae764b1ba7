import { CompiledQuery, sql } from 'kysely';
import { StoreUnavailable } from '../../../application/index.ts';
import { columnsOf, PETS, sqliteInsert } from '../schema.ts';
import type { LogFilter, LogPage, SqlDialect } from '../sql-dialect.ts';
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

/**
 * A page of the log after a position (the first parameter), a number of events long (the last), keeping
 * only the events `filter` names (its parameters in between: the types, then the stream).
 * The subquery reads in position order; an ORDER BY inside group_concat would sort it all over again.
 */
function logPageSql(filter: LogFilter = {}): string {
  const types = filter.types === undefined ? '' : ` and type in (${filter.types.length > 0 ? filter.types.map(() => '?').join(', ') : 'null'})`;
  const stream = filter.streamId === undefined ? '' : ' and stream_id = ?';
  return `
  select max(position) as last,
    '[' || group_concat(printf('[%d,%d,%s,%s,%s]', position, stream_version, json_quote(type), data, metadata), ',') || ']' as text
  from (select position, stream_version, type, data, metadata from events where position > ?${types}${stream} order by position limit ?)`;
}

const LOG_PAGE = logPageSql();

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
    const [expectedCode, columns] = constraint === 'pets_pkey'
      ? ['SQLITE_CONSTRAINT_PRIMARYKEY', 'pets.id']
      : ['SQLITE_CONSTRAINT_UNIQUE', 'events.stream_id, events.stream_version'];
    return code === expectedCode && typeof message === 'string' && message.endsWith(`constraint failed: ${columns}`);
  },

  async beginExclusive(connection) {
    await sql`begin immediate`.execute(connection);
  },

  async beginSnapshot(connection) {
    // A deferred transaction reads one snapshot from its first read on (WAL).
    await sql`begin`.execute(connection);
  },

  async swapInPets(connection, from) {
    await sql`drop table pets`.execute(connection);
    await sql.raw(`alter table ${from} rename to pets`).execute(connection);
    await sql`create index pets_status_id on pets (status, id)`.execute(connection);
  },

  async readLogPage(executor, afterPosition, limit, filter) {
    const query = filter === undefined
      ? CompiledQuery.raw(LOG_PAGE, [afterPosition, limit])
      : CompiledQuery.raw(logPageSql(filter), [afterPosition, ...(filter.types ?? []), ...(filter.streamId === undefined ? [] : [filter.streamId]), limit]);
    const { rows } = await executor.executeQuery<LogPage | { text: null }>(query);
    const row = rows[0];
    return row?.text == null ? null : row;
  },

  async readLogAhead(db, afterPosition, limit) {
    const { rows } = await sql<{ file: string; events: number }>`
      select (select file from pragma_database_list where name = 'main') as file,
        (select coalesce(max(position), 0) from events) - ${afterPosition} as events`.execute(db);
    const { file, events } = rows[0]!;
    // An in-memory database has no file to open again; Deno's driver is node:sqlite, which the thread does not load.
    if (file === '' || sqliteDriverForThisRuntime() !== 'better-sqlite3' || events < READ_AHEAD_FROM) return undefined;
    return readLogOnThread({ file, pageSql: LOG_PAGE, afterPosition, limit, busyTimeoutMs: BUSY_TIMEOUT_MS });
  },

  async insertPetRows(executor, into, values) {
    // Compiled by hand: Kysely's compiler would spend longer on thousands of values than SQLite does.
    const rows = values.length / columnsOf(PETS).length;
    if (rows === 0) return;
    await executor.executeQuery(CompiledQuery.raw(sqliteInsert(PETS, rows, into), values));
  },
};
