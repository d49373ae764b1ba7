import { CompiledQuery, sql } from 'kysely';
import { StoreUnavailable } from '../../../application/index.ts';
import { columnsOf, postgresInsert, postgresRowsJson } from '../schema.ts';
import { StatementUnanswered } from './postgres-pool.ts';
import type { SqlDialect } from '../sql-dialect.ts';
import { readPostgresLogPage } from '../sql-event-log.ts';

/** The channel each append notifies in its transaction, with its last position: delivered only once it commits. */
export const LOG_CHANNEL = 'petstore_log';

/** Notified instead of a position when the catalogue's rows were replaced without events (a projection rebuild). */
export const CATALOG_REPLACED = 'catalog replaced';

/**
 * The lock that makes positions follow commit order. An identity hands out numbers in the order of the
 * inserts, not of the commits: with two appends in flight, the later position can commit first, and a
 * reader that moved past it would never see the earlier one. Every group of appends takes this
 * transaction-level advisory lock before its first write and keeps it until it commits, so reading
 * `position > n` never skips an event still in flight.
 */
export const APPEND_LOCK = 0x70_65_74_73; // "pets"

/** Node's network errors that mean the server cannot be reached (or went away). */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT']);

/**
 * SQLSTATEs after which trying again later is the right answer: connection exceptions (class 08),
 * too many connections or other resource shortage (class 53), the server shutting down or starting
 * (57P01-57P03), a statement cancelled by the statement timeout (57014), serialisation failure and
 * deadlock (40001, 40P01), a lock timeout (55P03), the disk failing (58030 io_error; a full one is
 * 53100), a server that only reads (25006: a standby, or default_transaction_read_only).
 */
function isRetryableState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || ['57P01', '57P02', '57P03', '57014', '40001', '40P01', '55P03', '58030', '25006'].includes(code);
}

/** pg's own messages for a connection that failed, closed or timed out (these carry no code). */
const CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Connection ended)/;

export function isUnavailability(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof StatementUnanswered) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return NETWORK_ERRORS.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isRetryableState(code));
  if (error instanceof AggregateError) return error.errors.some(isUnavailability); // connecting to every address failed
  return CONNECTION_MESSAGE.test(error.message);
}

export const postgresSqlDialect: SqlDialect = {
  name: 'postgres',

  translateError(error) {
    if (error instanceof StoreUnavailable || !isUnavailability(error)) return error;
    return new StoreUnavailable('the database is unavailable; try again', { cause: error });
  },

  isUniqueViolation(error, constraint) {
    const { code, constraint: violated } = error as { code?: unknown; constraint?: unknown };
    return code === '23505' && violated === constraint;
  },

  async beginExclusive(connection, tables) {
    await sql`begin`.execute(connection);
    // Appends take the append lock before they write a read model: wait for it first, then hold off any
    // other writes to the tables (readers still read), so that neither waits for the other.
    await sql`select pg_advisory_xact_lock(${sql.lit(APPEND_LOCK)})`.execute(connection);
    if (tables.length > 0) await sql.raw(`lock table ${tables.join(', ')} in exclusive mode`).execute(connection);
  },

  async beginSnapshot(connection) {
    await sql`begin isolation level repeatable read`.execute(connection);
  },

  async insertRows(executor, table, rows, into = table.name) {
    // One JSON parameter, however many rows.
    if (rows.length > 0) await executor.executeQuery(CompiledQuery.raw(postgresInsert(table, 1, into), [postgresRowsJson(rows)]));
  },

  selectForUpdate: (query) => query.forUpdate(),

  async holdKey(connection, key) {
    await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(connection);
  },

  async swapIn(connection, table, from) {
    // Rows, not tables: dropping the table would need a lock that waits for appends that read it and now
    // wait for this transaction. Readers keep reading the old rows until the commit.
    const columns = columnsOf(table).join(', ');
    await sql.raw(`delete from ${table.name}`).execute(connection);
    await sql.raw(`insert into ${table.name} (${columns}) select ${columns} from ${from}`).execute(connection);
    await sql.raw(`drop table ${from}`).execute(connection);
    // Rows changed without events: every instance's listing cache hears, at the commit, that anything may have.
    await sql`select pg_notify(${LOG_CHANNEL}, ${CATALOG_REPLACED})`.execute(connection);
  },

  readLogPage: readPostgresLogPage,
};
