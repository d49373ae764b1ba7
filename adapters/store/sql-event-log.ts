import { CompiledQuery, sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { EventLog, LogQuery, StoredEvent, StreamRead } from '../../application/index.ts';
import { storedEventsFromPage } from './write/event-rows.ts';
import { columnsOf, EVENTS, storedEventFromRow } from './schema.ts';
import { translated } from './sql-dialect.ts';
import type { LogFilter, LogPage, SqlDialect } from './sql-dialect.ts';
import type { PetStoreDatabase } from './schema.ts';

/**
 * The one reader of the log, the `events` table: every statement that reads it is here (a stream, a page
 * by position with filters, the events after a position, the log's end), for both databases. The rest
 * of the store runs these statements where it must (SQLite's writer, PostgreSQL's listening connection),
 * and the rest of the service reads the log through `EventLog`.
 *
 * What a reader sees is committed: SQLite has one writer at a time, and PostgreSQL hands out positions
 * under the append lock (`APPEND_LOCK`), so no later position becomes visible before an earlier one.
 */

/**
 * Where the log ends, as `last`: the highest position ever given, so a position is never given twice.
 * SQLite: AUTOINCREMENT's high-water mark, which outlives a deleted row. PostgreSQL: the last committed
 * event; appends commit in the order of their positions, so every position up to it is committed too.
 */
export const LOG_END = {
  sqlite: "select max(coalesce((select seq from sqlite_sequence where name = 'events'), 0), coalesce((select max(position) from events), 0)) as last",
  postgres: 'select coalesce(max(position), 0) as last from events',
} as const;

/** The end from `LOG_END`'s rows. */
export const logEndOf = (rows: readonly { last: number | string | null }[]): number => Number(rows[0]?.last ?? 0);

/** The position of the log's last event, 0 when it has none. */
export async function readLogEnd(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): Promise<number> {
  return translated(dialect, () => readLogEndOn(db, dialect));
}

/** `EventLog.end` on `executor`, errors untranslated. */
async function readLogEndOn(executor: Kysely<PetStoreDatabase>, dialect: SqlDialect): Promise<number> {
  return logEndOf((await executor.executeQuery<{ last: number | null }>(CompiledQuery.raw(LOG_END[dialect.name], []))).rows);
}

const EVENT_COLUMNS = columnsOf(EVENTS).join(', ');
/** What a page holds of each event, in `LogPage`'s order. */
const PAGE_COLUMNS = 'position, stream_id, stream_version, type, data, metadata';

/** PostgreSQL: every column of up to `$2` events after position `$1`, in position order. */
export const POSTGRES_EVENTS_AFTER = `select ${EVENT_COLUMNS} from events where position > $1 order by position limit $2`;

/** SQLite: each stream's version (`stream_id`, `version`) of the streams named by the JSON array `?`. */
export const SQLITE_STREAM_VERSIONS = 'select stream_id, max(stream_version) as version from events where stream_id in (select value from json_each(?)) group by stream_id';

/** PostgreSQL: one stream's version (`version`, null: no event) of stream `$1`. */
export const POSTGRES_STREAM_VERSION = 'select max(stream_version) as version from events where stream_id = $1';

/** PostgreSQL: each stream's version (`stream_id`, `version`) of the streams in the text array `parameter`. */
export function postgresStreamVersions(parameter: string): string {
  return `select stream_id, max(stream_version) as version from events where stream_id = any(${parameter}::text[]) group by stream_id`;
}

/**
 * SQLite: a page of the log after a position (the first parameter), a number of events long (the last),
 * keeping only the events `filter` names (its parameters in between: the types, then the stream).
 * The subquery reads in position order; an ORDER BY inside group_concat would sort it all over again.
 */
export function sqliteLogPageSql(filter: LogFilter = {}): string {
  const types = filter.types === undefined ? '' : ` and type in (${filter.types.length > 0 ? filter.types.map(() => '?').join(', ') : 'null'})`;
  const stream = filter.streamId === undefined ? '' : ' and stream_id = ?';
  const through = filter.through === undefined ? '' : ' and position <= ?';
  const end = filter.withEnd ? `, (${LOG_END.sqlite}) as log_end` : '';
  const data = filter.dataAsText ? 'json_quote(data)' : 'data';
  return `
  select max(position) as last,
    '[' || group_concat(printf('[%d,%s,%d,%s,%s,%s]', position, json_quote(stream_id), stream_version, json_quote(type), ${data}, metadata), ',') || ']' as text${end}
  from (select ${PAGE_COLUMNS} from events where position > ?${through}${types}${stream} order by position limit ?)`;
}

/** The SQLite page with no filter: also what the log-reading thread runs. */
export const SQLITE_LOG_PAGE = sqliteLogPageSql();

/** SQLite: the page `sqliteLogPageSql` describes; null when there is no event. */
export async function readSqliteLogPage(executor: Kysely<PetStoreDatabase>, afterPosition: number, limit: number, filter?: LogFilter): Promise<LogPage | null> {
  const query = filter === undefined
    ? CompiledQuery.raw(SQLITE_LOG_PAGE, [afterPosition, limit])
    : CompiledQuery.raw(sqliteLogPageSql(filter), [
      afterPosition, ...(filter.through === undefined ? [] : [filter.through]), ...(filter.types ?? []), ...(filter.streamId === undefined ? [] : [filter.streamId]), limit,
    ]);
  const { rows } = await executor.executeQuery<{ last: number; text: string | null; log_end?: number }>(query);
  return pageOf(rows[0], filter);
}

/** The page a page statement answered: null when it found no event, unless asked for the log's end as well. */
function pageOf(row: { last: number | string | null; text: string | null; log_end?: number | string } | undefined, filter: LogFilter | undefined): LogPage | null {
  if (filter?.withEnd) return { text: row?.text ?? '[]', last: Number(row?.last ?? 0), end: Number(row?.log_end ?? 0) };
  return row?.text == null ? null : { text: row.text, last: Number(row.last) };
}


/** PostgreSQL: a page of the log as one text, like SQLite's; null when there is no event. */
export async function readPostgresLogPage(executor: Kysely<PetStoreDatabase>, afterPosition: number, limit: number, filter?: LogFilter): Promise<LogPage | null> {
  const types = filter?.types === undefined ? sql`` : sql` and type = any(${[...filter.types]}::text[])`;
  const stream = filter?.streamId === undefined ? sql`` : sql` and stream_id = ${filter.streamId}`;
  const through = filter?.through === undefined ? sql`` : sql` and position <= ${filter.through}`;
  const end = filter?.withEnd ? sql.raw(`, (${LOG_END.postgres}) as log_end`) : sql``;
  const data = sql.raw(filter?.dataAsText ? 'to_json(data)' : 'data');
  const { rows } = await sql<{ last: number | string | null; text: string | null; log_end?: number | string }>`
    select max(position) as last,
      '[' || string_agg(format('[%s,%s,%s,%s,%s,%s]', position, to_json(stream_id), stream_version, to_json(type), ${data}, metadata), ',') || ']' as text${end}
    from (select ${sql.raw(PAGE_COLUMNS)} from events
      where position > ${afterPosition}${through}${types}${stream} order by position limit ${limit}) as page`
    .execute(executor);
  return pageOf(rows[0], filter);
}

/** A stream's events in order, and its version. */
export async function readStream(db: Kysely<PetStoreDatabase>, dialect: SqlDialect, streamId: string): Promise<StreamRead> {
  const rows = await translated(dialect, () =>
    db.selectFrom('events').selectAll().where('stream_id', '=', streamId).orderBy('stream_version').execute(),
  );
  const events = rows.map(storedEventFromRow);
  return { version: events.at(-1)?.streamVersion ?? 0, events };
}

/** The events at `positions` (every one of them committed), in the order asked. */
export async function readEventsAt(executor: Kysely<PetStoreDatabase>, positions: readonly number[]): Promise<StoredEvent[]> {
  if (positions.length === 0) return [];
  const rows = await executor.selectFrom('events').selectAll().where('position', 'in', [...positions]).execute();
  const byPosition = new Map(rows.map((row) => [Number(row.position), storedEventFromRow(row)]));
  return positions.map((position) => {
    const stored = byPosition.get(position);
    if (!stored) throw new Error(`no event at position ${position} of the log`);
    return stored;
  });
}

/** How many events the log holds. */
export async function countEvents(db: Kysely<PetStoreDatabase>): Promise<number> {
  const { n } = await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

/** The streams with an event after `afterPosition`. */
export async function streamsWrittenAfter(db: Kysely<PetStoreDatabase>, afterPosition: number): Promise<string[]> {
  const rows = await db.selectFrom('events').select('stream_id').distinct().where('position', '>', afterPosition).execute();
  return rows.map((row) => row.stream_id);
}

/**
 * The log by position over SQL, a page at a time as one text (`readLogPage`): a stream catching up reads
 * hundreds of thousands of events, and one parse a page costs a fraction of a row object per event.
 */
export function createSqlEventLog(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): EventLog {
  return {
    readLog: (query) => translated(dialect, () => readLogOn(db, dialect, query)),
    end: () => readLogEnd(db, dialect),
  };
}

/**
 * `LogToEnd.readLogToEnd` on `executor`, the page and the log's end in one statement (one snapshot), errors
 * untranslated. Its events keep their stored text (`StoredEvent.text`): a claim hands them out as it is.
 */
export async function readLogToEndOn(executor: Kysely<PetStoreDatabase>, dialect: SqlDialect, { after, limit, types, streamId }: LogQuery): Promise<{ events: StoredEvent[]; end: number }> {
  const page = await dialect.readLogPage(executor, after, limit, { types, streamId, withEnd: true, dataAsText: true });
  return { events: page === null ? [] : storedEventsFromPage(page.text, true), end: page?.end ?? 0 };
}

/** `EventLog.readLog` on `executor`, errors untranslated. */
async function readLogOn(executor: Kysely<PetStoreDatabase>, dialect: SqlDialect, { after, limit, types, streamId, through }: LogQuery): Promise<StoredEvent[]> {
  const filter = types === undefined && streamId === undefined && through === undefined ? undefined : { types, streamId, through };
  const page = await dialect.readLogPage(executor, after, limit, filter);
  return page === null ? [] : storedEventsFromPage(page.text);
}
