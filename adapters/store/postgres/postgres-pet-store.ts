import { Kysely, PostgresDialect } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../../application/index.ts';
import { translated } from '../sql-dialect.ts';
import { migrateToLatest } from '../migrations.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { createSqlPetStore } from '../sql-pet-store.ts';
import type { SqlPetStore } from '../sql-pet-store.ts';
import { postgresSqlDialect } from './postgres-sql-dialect.ts';
import { createPostgresWrites } from './postgres-writes.ts';
import { postgresCommits } from './postgres-commits.ts';
import { createPostgresPool } from './postgres-pool.ts';
import type { PostgresSettings } from './postgres-pool.ts';

export interface PostgresStoreOptions {
  readonly clock?: Clock;
  /** Apply pending migrations first (default true). */
  readonly migrate?: boolean;
  readonly logger?: Logger;
  /** Where to LISTEN for other instances' commits; without it they are noticed by polling the log's head. */
  readonly listenUrl?: string;
  /** The pool's statement timeout (milliseconds, 0: none): the listening connection's too, and the longest a write waits from its arrival. */
  readonly statementTimeoutMs?: number;
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
  return createPostgresPetStore(db, { ...options, migrate: false, listenUrl: settings.url, statementTimeoutMs: settings.statementTimeoutMs });
}

/** The store over an open Kysely instance that speaks PostgreSQL (a pg pool, or PGlite in tests). */
export async function createPostgresPetStore(db: Kysely<PetStoreDatabase>, options: PostgresStoreOptions = {}): Promise<SqlPetStore> {
  if (options.migrate !== false) await migrateToLatest(db);
  const clock = options.clock ?? { now: () => new Date() };
  const commits = postgresCommits(db, { url: options.listenUrl, statementTimeoutMs: options.statementTimeoutMs, logger: options.logger });
  const writes = createPostgresWrites(db, clock, { committed: commits.committed, committing: commits.committing, waitBoundMs: options.statementTimeoutMs });
  const store = createSqlPetStore(db, postgresSqlDialect, {
    clock,
    writes,
    commits,
    checkWrites: writes.checkWrites,
    checkFollowing: commits.stalled,
    async close() {
      await writes.drain();
      await commits.close();
      await db.destroy();
    },
  });
  return { ...store, boundedTransaction: writes.transaction };
}

function postgresKysely(settings: PostgresSettings, logger: Logger | undefined): Kysely<PetStoreDatabase> {
  return new Kysely<PetStoreDatabase>({ dialect: new PostgresDialect({ pool: createPostgresPool(settings, logger) }) });
}
