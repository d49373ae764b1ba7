import { CompiledQuery, SqliteDialect, SqliteDriver } from 'kysely';
import type { DatabaseConnection, Driver, SqliteDatabase, SqliteDialectConfig, SqliteStatement } from 'kysely';

/**
 * Kysely's SQLite dialect, with two changes:
 * - transactions begin IMMEDIATE: every transaction we open writes, and a deferred BEGIN that
 *   upgrades to a write fails with SQLITE_BUSY against another process instead of waiting;
 * - prepared statements are cached, since Kysely prepares every query afresh.
 * It speaks only Kysely's narrow `SqliteDatabase` interface, so any driver with `prepare`/`close` fits.
 */
export class PetStoreSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionDriver(this.#config);
  }
}

class ImmediateTransactionDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

const STATEMENT_CACHE_SIZE = 256;

/** A database whose prepared statements are cached; `forget` drops them (before the connection behind is replaced). */
export interface CachedStatements extends SqliteDatabase {
  forget(): void;
}

/** Wraps a database so that the same SQL text reuses one prepared statement. */
export function withStatementCache(database: SqliteDatabase): CachedStatements {
  const cache = new Map<string, SqliteStatement>();
  return {
    forget: () => cache.clear(),
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        statement = database.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
    close() {
      cache.clear();
      database.close();
    },
  };
}
