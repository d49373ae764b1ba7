import type { Kysely } from 'kysely';
import { petStreamId } from '../../domain/index.ts';
import type { EventLog, LogQuery, StoredEvent } from '../../application/index.ts';
import { storedEventFromRow } from './event-rows.ts';
import { translated } from './sql-dialect.ts';
import type { SqlDialect } from './sql-dialect.ts';
import type { PetStoreDatabase } from './schema.ts';

/**
 * The log by position over SQL, the same query on SQLite and PostgreSQL. What a reader sees is committed:
 * SQLite has one writer at a time, and PostgreSQL hands out positions under the append lock
 * (`APPEND_LOCK`), so no later position becomes visible before an earlier one.
 */
export function createSqlEventLog(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): EventLog {
  return {
    async readLog({ after, limit, types, petId }: LogQuery): Promise<StoredEvent[]> {
      let query = db.selectFrom('events').selectAll().where('position', '>', after);
      if (types !== undefined) query = query.where('type', 'in', types.length > 0 ? [...types] : ['']);
      if (petId !== undefined) query = query.where('stream_id', '=', petStreamId(petId));
      const rows = await translated(dialect, () => query.orderBy('position').limit(limit).execute());
      return rows.map(storedEventFromRow);
    },
  };
}
