import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { StreamVersionConflict } from '../../../application/index.ts';
import type { AppendResult, Clock } from '../../../application/index.ts';
import type { AppendRows } from '../append-plan.ts';
import { appendAll } from '../append-group.ts';
import type { GroupOutcome, GroupTransaction, PendingAppend } from '../append-group.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { translated } from '../sql-dialect.ts';
import type { SqlWrites } from '../sql-pet-store.ts';
import { APPEND_LOCK, isUnavailability, postgresSqlDialect } from './postgres-sql-dialect.ts';
import { LOG_CHANNEL } from './postgres-commit-signal.ts';

/** At most this many appends a group: past 64 subtransactions, PostgreSQL's snapshots of every session grow slower. */
export const GROUP_MOST_APPENDS = 64;

export interface PostgresWrites extends SqlWrites {
  /** Resolves when every append asked for so far has committed or failed. */
  drain(): Promise<void>;
}

/**
 * Appends on PostgreSQL, committed in groups as on SQLite: the appends asked for while the previous
 * group commits share one transaction and one flush (`synchronous_commit` stays on; nobody is answered
 * before the commit), each in a savepoint of its own. A group takes the append lock first, so groups of
 * all instances commit one after the other in the order of their positions, and a reader of
 * `position > n` never skips an event still in flight; none of them waits for the lock while holding rows.
 */
export function createPostgresWrites(db: Kysely<PetStoreDatabase>, clock: Clock, committed?: (position: number) => void): PostgresWrites {
  let waiting: PendingAppend[] = [];
  let scheduled = false;
  let flushing: Promise<void> | undefined;

  function schedule(): void {
    if (scheduled || flushing) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flushing = commitGroup().finally(() => {
        flushing = undefined;
        if (waiting.length > 0) schedule();
      });
    });
  }

  /** Commits the appends waiting now (up to GROUP_MOST_APPENDS) as one group. Never rejects. */
  async function commitGroup(): Promise<void> {
    const batch = waiting.slice(0, GROUP_MOST_APPENDS);
    waiting = waiting.slice(batch.length);
    let outcome: GroupOutcome;
    try {
      outcome = await translated(postgresSqlDialect, () => db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${sql.lit(APPEND_LOCK)})`.execute(trx);
        const appended = await appendAll(groupOn(trx), batch, clock.now());
        // Delivered when (and only if) the group commits.
        if (appended.last > 0) await sql`select pg_notify(${LOG_CHANNEL}, ${String(appended.last)})`.execute(trx);
        return appended;
      }));
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    if (outcome.last > 0) committed?.(outcome.last);
    for (const answer of outcome.answers) answer();
  }

  return {
    append(streamId, expected, events, metadata, options = {}) {
      return new Promise<AppendResult>((resolve, reject) => {
        waiting.push({ request: { streamId, expected, events, metadata, options }, resolve, reject, observed: undefined });
        schedule();
      });
    },
    petIds: {
      // A sequence is outside transactions anyway: drawn on any connection, never handed out twice.
      async next() {
        const { rows } = await translated(postgresSqlDialect, () => sql<{ id: number }>`select nextval('pet_ids') as id`.execute(db));
        return rows[0]!.id;
      },
    },
    async drain() {
      while (scheduled || flushing || waiting.length > 0) {
        if (flushing) await flushing;
        else if (scheduled) await new Promise((resolve) => setImmediate(resolve));
        else schedule();
      }
    },
  };
}

/**
 * A group's savepoints on its transaction: one nested savepoint an append, never released (releasing
 * costs a round trip and frees nothing before the commit); rolling back to the innermost undoes one append.
 */
function groupOn(trx: Transaction<PetStoreDatabase>): GroupTransaction {
  return {
    rows: appendRows(trx),
    savepoint: async () => void (await sql`savepoint append`.execute(trx)),
    release() {},
    rollbackTo: async () => void (await sql`rollback to savepoint append`.execute(trx)),
    failsGroup: isUnavailability,
    async explain(error, { streamId, expected }) {
      // Another writer appended between this one's read and its writes: a constraint decided.
      if (!postgresSqlDialect.isUniqueViolation(error, 'events_stream_version_unique') && !postgresSqlDialect.isUniqueViolation(error, 'pets_pkey')) return error;
      const row = await trx.selectFrom('events').select(sql<number | null>`max(stream_version)`.as('version')).where('stream_id', '=', streamId).executeTakeFirst();
      return new StreamVersionConflict(streamId, expected, row?.version ?? 0);
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
      // The group holds the append lock: positions drawn now commit in their order.
      const values = sql.join(rows.map((row) =>
        sql`(${row.stream_id}, ${row.stream_version}::integer, ${row.type}, ${row.data}, ${row.metadata}, ${row.recorded_at})`));
      const { rows: inserted } = await sql<{ position: number }>`
        with inserted as (
          insert into events (stream_id, stream_version, type, data, metadata, recorded_at)
          select * from (values ${values}) as appended (stream_id, stream_version, type, data, metadata, recorded_at)
          returning position
        )
        select max(position) as position from inserted`.execute(trx);
      return Number(inserted[0]!.position);
    },
  };
}
