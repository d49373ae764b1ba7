import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import type { EventLog } from '../../../application/index.ts';
import { createSqlEventLog } from '../sql-event-log.ts';
import { storedEventFromRow } from '../event-rows.ts';
import type { EventRow } from '../event-rows.ts';
import type { Logger } from 'pino';
import type { Clock } from '../../../application/index.ts';
import { translated } from '../sql-dialect.ts';
import { migrateToLatest } from '../migrations.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { createSqlPetStore } from '../sql-pet-store.ts';
import type { SqlPetStore } from '../sql-pet-store.ts';
import { postgresSqlDialect } from './postgres-sql-dialect.ts';
import { createPostgresWrites } from './postgres-writes.ts';
import { headOf, LOG_HEAD, postgresCommitSignal } from './postgres-commit-signal.ts';
import type { ListeningStatement, PostgresCommitSignal } from './postgres-commit-signal.ts';
import { postgresCatalogChanges } from './postgres-catalog-changes.ts';
import { createPostgresPool, prepared } from './postgres-pool.ts';
import type { PostgresSettings } from './postgres-pool.ts';

export interface PostgresStoreOptions {
  readonly clock?: Clock;
  /** Apply pending migrations first (default true). */
  readonly migrate?: boolean;
  readonly logger?: Logger;
  /** Where to LISTEN for other instances' commits; without it they are noticed by polling the log's head. */
  readonly listenUrl?: string;
  /** The statement timeout of the listening connection (milliseconds, 0: none), as the pool's. */
  readonly listenStatementTimeoutMs?: number;
}

/**
 * The pet store on a PostgreSQL database that any number of instances share. Migrations run on a
 * connection of their own without the statement timeout (a long migration must not be cancelled, and
 * an instance waiting for another's migration lock must not give up); Kysely's Migrator holds an
 * advisory lock for the run, so instances that start together migrate one after the other.
 */
export async function openPostgresPetStore(settings: PostgresSettings, options: PostgresStoreOptions = {}): Promise<SqlPetStore> {
  if (options.migrate !== false) {
    const migrator = postgresKysely({ ...settings, poolSize: 1, statementTimeoutMs: 0 }, options.logger);
    try {
      await translated(postgresSqlDialect, () => migrateToLatest(migrator));
    } finally {
      await migrator.destroy();
    }
  }
  const db = postgresKysely(settings, options.logger);
  return createPostgresPetStore(db, { ...options, migrate: false, listenUrl: settings.url, listenStatementTimeoutMs: settings.statementTimeoutMs });
}

/** The store over an open Kysely instance that speaks PostgreSQL (a pg pool, or PGlite in tests). */
export async function createPostgresPetStore(db: Kysely<PetStoreDatabase>, options: PostgresStoreOptions = {}): Promise<SqlPetStore> {
  if (options.migrate !== false) await migrateToLatest(db);
  const clock = options.clock ?? { now: () => new Date() };
  const commits = postgresCommitSignal(db, { url: options.listenUrl, statementTimeoutMs: options.listenStatementTimeoutMs, logger: options.logger });
  const changes = postgresCatalogChanges(logLooks(db, commits), commits);
  const writes = createPostgresWrites(db, clock, (group) => {
    changes.committedHere(group);
    commits.committed(group.last);
  });
  const store = createSqlPetStore(db, postgresSqlDialect, {
    clock,
    writes,
    commits,
    async close() {
      await writes.drain();
      changes.close();
      await commits.close();
      await db.destroy();
    },
  });
  return { ...store, changes };
}

function postgresKysely(settings: PostgresSettings, logger: Logger | undefined): Kysely<PetStoreDatabase> {
  return new Kysely<PetStoreDatabase>({ dialect: new PostgresDialect({ pool: createPostgresPool(settings, logger) }) });
}

// Precompiled: read whenever a look knows something was committed since the last.
const READ_LOG: ListeningStatement = {
  name: 'petstore_log_look',
  text: prepared('select position, stream_id, stream_version, type, data, metadata, recorded_at from events where position > $1 order by position limit $2'),
};

/**
 * What the listing cache's looks ask: where the log ends (before every batch of cached listings,
 * mostly to learn that nothing is new) and the events after a position. On the listening connection
 * while it listens (no pool to wait in, no query builder), else through the pool.
 */
function logLooks(db: Kysely<PetStoreDatabase>, commits: PostgresCommitSignal): EventLog & { head(): Promise<number> } {
  const eventLog = createSqlEventLog(db, postgresSqlDialect);
  const rowsOf = <Row>(statement: ListeningStatement, values: unknown[]) => translated(postgresSqlDialect, async () =>
    await commits.queryWhileListening<Row>(statement, values) ?? (await db.executeQuery<Row>(CompiledQuery.raw(statement.text, values))).rows);
  return {
    readLog: async (query) => query.types === undefined && query.petId === undefined
      ? (await rowsOf<EventRow>(READ_LOG, [query.after, query.limit])).map(storedEventFromRow)
      : eventLog.readLog(query),
    head: async () => headOf(await rowsOf<{ head: number | null }>(LOG_HEAD, [])),
  };
}
