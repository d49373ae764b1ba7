import { CompiledQuery, SqliteDialect, SqliteDriver } from 'kysely';
import type { DatabaseConnection, Driver, SqliteDatabase, SqliteDialectConfig, SqliteStatement } from 'kysely';

const isBusy = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

/**
 * Runs `attempt`, and again on a timer (after 1 ms, doubling up to 50 ms) while SQLite answers that
 * another connection holds the lock, for at most `waitMs`: the wait SQLite's busy timeout would sleep
 * on the calling thread, spent on the event loop's timers instead, so that this process's other
 * connection (the store's writer) can finish the transaction it holds meanwhile.
 */
export async function whileBusy<T>(attempt: () => T | Promise<T>, waitMs: number): Promise<T> {
  const deadline = performance.now() + waitMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      return await attempt();
    } catch (error) {
      if (!isBusy(error) || performance.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(1, deadline - performance.now()))));
  }
}

export interface PetStoreSqliteDialectConfig extends SqliteDialectConfig {
  /**
   * For a connection with no busy timeout: how long a statement that finds the lock taken is tried again
   * (see `whileBusy`). In WAL mode only taking the write lock can find it taken, and a statement that
   * failed to take it did nothing, so trying it again is safe.
   */
  readonly lockWaitMs?: number;
}

/**
 * Kysely's SQLite dialect, with three changes:
 * - transactions begin IMMEDIATE: every transaction we open writes, and a deferred BEGIN that
 *   upgrades to a write fails with SQLITE_BUSY against another process instead of waiting;
 * - with `lockWaitMs`, a statement waits for the lock on a timer (`whileBusy`);
 * - prepared statements are cached, since Kysely prepares every query afresh.
 * It speaks only Kysely's narrow `SqliteDatabase` interface, so any driver with `prepare`/`close` fits.
 */
export class PetStoreSqliteDialect extends SqliteDialect {
  readonly #config: PetStoreSqliteDialectConfig;

  constructor(config: PetStoreSqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionDriver(this.#config);
  }
}

class ImmediateTransactionDriver extends SqliteDriver {
  readonly #lockWaitMs: number | undefined;

  constructor(config: PetStoreSqliteDialectConfig) {
    super(config);
    this.#lockWaitMs = config.lockWaitMs;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    const waitMs = this.#lockWaitMs;
    if (waitMs === undefined) return connection;
    return {
      executeQuery: (query) => whileBusy(() => connection.executeQuery(query), waitMs),
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }

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
