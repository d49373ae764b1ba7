import type { Kysely } from 'kysely';
import { petStreamId } from '../../domain/index.ts';
import type { EventLog, LogQuery, StoredEvent } from '../../application/index.ts';
import { storedEventsFromPage } from './event-rows.ts';
import { translated } from './sql-dialect.ts';
import type { SqlDialect } from './sql-dialect.ts';
import type { PetStoreDatabase } from './schema.ts';

/**
 * The log by position over SQL, a page at a time as one text (`readLogPage`): a stream catching up reads
 * hundreds of thousands of events, and one parse a page costs a fraction of a row object per event.
 * What a reader sees is committed: SQLite has one writer at a time, and PostgreSQL hands out positions
 * under the append lock (`APPEND_LOCK`), so no later position becomes visible before an earlier one.
 */
export function createSqlEventLog(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): EventLog {
  return {
    async readLog({ after, limit, types, petId }: LogQuery): Promise<StoredEvent[]> {
      const filter = types === undefined && petId === undefined
        ? undefined
        : { types, streamId: petId === undefined ? undefined : petStreamId(petId) };
      const page = await translated(dialect, () => dialect.readLogPage(db, after, limit, filter));
      return page === null ? [] : storedEventsFromPage(page.text);
    },
    async head(): Promise<number> {
      const row = await translated(dialect, () => db.selectFrom('events').select((select) => select.fn.max('position').as('last')).executeTakeFirst());
      return Number(row?.last ?? 0);
    },
  };
}
