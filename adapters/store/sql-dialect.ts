import type { Kysely } from 'kysely';
import type { ReadModelRow } from '../../application/index.ts';
import type { PetStoreDatabase, ReadRow, TableDeclaration } from './schema.ts';

/**
 * What the code shared by both SQL databases (the event store's reads, the catalogue, the key table,
 * the projection maintenance) needs to differ between them. That shared code is Kysely queries; raw
 * SQL lives where Kysely cannot say it or costs too much on a hot path: here (locks, log pages, bulk
 * inserts), and in each backend's folder (its group writes, SQLite's precompiled listing). Column
 * lists and insert statements in raw SQL are derived from `schema.ts`, never spelled out.
 */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /** The database's own failures in the application's words (`StoreUnavailable`); anything else unchanged. */
  translateError(error: unknown): unknown;
  /** True when `error` says that a unique constraint refused a row: `events_stream_version_unique`, or a read-model table's `<table>_pkey`. */
  isUniqueViolation(error: unknown, constraint: string): boolean;

  /** Begins, on `connection`, a transaction during which no append can commit (nor anything else write to `tables`). */
  beginExclusive(connection: Kysely<PetStoreDatabase>, tables: readonly string[]): Promise<void>;
  /** Begins, on `connection`, a transaction that reads one consistent snapshot throughout. */
  beginSnapshot(connection: Kysely<PetStoreDatabase>): Promise<void>;
  /** Inside `beginExclusive`'s transaction: replaces what `table` holds with what `from` holds; `from` goes. */
  swapIn(connection: Kysely<PetStoreDatabase>, table: TableDeclaration, from: string): Promise<void>;

  /**
   * The first `limit` events after `afterPosition` (only those `filter` keeps), null when there are none.
   * One text a page: far cheaper to read and parse than a row object per event.
   */
  readLogPage(executor: Kysely<PetStoreDatabase>, afterPosition: number, limit: number, filter?: LogFilter): Promise<LogPage | null>;
  /**
   * The pages `readLogPage` would give, one after another from `afterPosition`, read ahead of the caller
   * on a thread and connection of their own; undefined when the dialect cannot here, or when the log is
   * too short to be worth a thread. Only for reads that need not share a transaction with the caller.
   */
  readLogAhead?(db: Kysely<PetStoreDatabase>, afterPosition: number, limit: number): Promise<AsyncIterable<LogPage> | undefined>;
  /**
   * Inserts `rows` into `into` (the table itself unless another is named: a scratch copy shaped as
   * `table`), which holds none of their keys, in one statement whose text comes from the declaration
   * (hundreds of rows: no query builder).
   */
  insertRows<T extends TableDeclaration>(executor: Kysely<PetStoreDatabase>, table: T, rows: readonly (ReadRow<T> | ReadModelRow)[], into?: string): Promise<void>;

  /**
   * Inside a transaction, `query` (a select of rows it will change) with those rows held against other
   * connections until it ends, where the transaction alone does not hold them: PostgreSQL `FOR UPDATE`;
   * SQLite's write transactions hold the whole file already.
   */
  selectForUpdate<Q extends { forUpdate(): Q }>(query: Q): Q;
  /**
   * Inside a transaction on `connection`: holds `key` until it ends, so that transactions holding the same
   * key take turns (PostgreSQL: an advisory lock; SQLite's write transactions take turns already).
   */
  holdKey(connection: Kysely<PetStoreDatabase>, key: string): Promise<void>;
}

/** Which events a page keeps: only these types (none: no event), only this stream's; absent: all. */
export interface LogFilter {
  readonly types?: readonly string[] | undefined;
  readonly streamId?: string | undefined;
  /** Only events at or before this position. */
  readonly through?: number | undefined;
  /**
   * Also where the log ends (`LogPage.end`), read in the page's statement, one snapshot: no event up to
   * there is missing from a page shorter than its limit. The page then comes even with no event (`[]`, `last` 0).
   */
  readonly withEnd?: boolean | undefined;
  /** Each event's data as a JSON string of its stored text (`storedEventsFromPage` then keeps the text and parses it only when asked). */
  readonly dataAsText?: boolean | undefined;
}

/** Some events of the log, the last at `last`. */
export interface LogPage {
  /** A JSON array: `[position, stream version, type, data, metadata]` for each event (data and metadata as stored), in no promised order. */
  readonly text: string;
  readonly last: number;
  /** The log's end when the page was read, when asked (`LogFilter.withEnd`). */
  readonly end?: number;
}

/** Runs `work`, rethrowing its failure as the dialect names it. */
export async function translated<T>(dialect: SqlDialect, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw dialect.translateError(error);
  }
}
