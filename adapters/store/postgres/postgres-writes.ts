import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { StreamVersionConflict } from '../../../application/index.ts';
import type { Clock } from '../../../application/index.ts';
import { executeAppend } from '../append-plan.ts';
import type { AppendRows } from '../append-plan.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { translated } from '../sql-dialect.ts';
import type { SqlWrites } from '../sql-pet-store.ts';
import { APPEND_LOCK, postgresSqlDialect } from './postgres-sql-dialect.ts';
import { LOG_CHANNEL } from './postgres-commit-signal.ts';

/** Appends on PostgreSQL: one transaction each, executing the shared append plan on Kysely rows. */
export function createPostgresWrites(db: Kysely<PetStoreDatabase>, clock: Clock, committed?: (position: number) => void): SqlWrites {
  return {
    async append(streamId, expected, events, metadata, options = {}) {
      try {
        const { version, position } = await translated(postgresSqlDialect, () =>
          db.transaction().execute((trx) => executeAppend(appendRows(trx), { streamId, expected, events, metadata, options }, clock.now())));
        committed?.(position);
        return { version, position };
      } catch (error) {
        // Another writer appended between this one's read and its writes: a constraint decided.
        if (postgresSqlDialect.isUniqueViolation(error, 'events_stream_version_unique') || postgresSqlDialect.isUniqueViolation(error, 'pets_pkey')) {
          const row = await translated(postgresSqlDialect, () =>
            db.selectFrom('events').select(sql<number | null>`max(stream_version)`.as('version')).where('stream_id', '=', streamId).executeTakeFirst());
          throw new StreamVersionConflict(streamId, expected, row?.version ?? 0);
        }
        throw error;
      }
    },
    petIds: {
      // A sequence is outside transactions anyway: drawn on any connection, never handed out twice.
      async next() {
        const { rows } = await translated(postgresSqlDialect, () => sql<{ id: number }>`select nextval('pet_ids') as id`.execute(db));
        return rows[0]!.id;
      },
    },
  };
}

function appendRows(trx: Transaction<PetStoreDatabase>): AppendRows {
  return {
    async streamVersion(streamId) {
      const row = await trx.selectFrom('events').select(sql<number | null>`max(stream_version)`.as('version')).where('stream_id', '=', streamId).executeTakeFirst();
      return row?.version ?? 0;
    },
    petRow: (id) => trx.selectFrom('pets').selectAll().where('id', '=', id).executeTakeFirst(),
    async remember(record, now) {
      await trx.deleteFrom('idempotency_keys')
        .where('scope', '=', record.scope).where('idempotency_key', '=', record.key).where('expires_at', '<=', now)
        .execute();
      const inserted = await trx.insertInto('idempotency_keys')
        .values({ scope: record.scope, idempotency_key: record.key, fingerprint: record.fingerprint, pet: JSON.stringify(record.pet), expires_at: record.expiresAt })
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      return inserted.numInsertedOrUpdatedRows !== 0n;
    },
    async writePet(row, isNew) {
      if (isNew) await trx.insertInto('pets').values(row).execute();
      else await trx.updateTable('pets').set(row).where('id', '=', row.id).execute();
    },
    async insertEvents(rows) {
      // One statement: the one-row join takes the lock before the identity draws the first position, and
      // the notification of the last position goes out when (and only if) the transaction commits.
      const values = sql.join(rows.map((row) =>
        sql`(${row.stream_id}, ${row.stream_version}::integer, ${row.type}, ${row.data}, ${row.metadata}, ${row.recorded_at})`));
      const { rows: inserted } = await sql<{ position: number }>`
        with inserted as (
          insert into events (stream_id, stream_version, type, data, metadata, recorded_at)
          select appended.* from (values ${values}) as appended (stream_id, stream_version, type, data, metadata, recorded_at)
          cross join (select pg_advisory_xact_lock(${sql.lit(APPEND_LOCK)})) as ordered
          returning position
        )
        select last.position, pg_notify(${LOG_CHANNEL}, last.position::text) as notified
        from (select max(position) as position from inserted) as last`.execute(trx);
      return Number(inserted[0]!.position);
    },
  };
}
