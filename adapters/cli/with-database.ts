import { existsSync } from 'node:fs';
import { loadConfig } from '../config/config.ts';
import type { DatabaseConfig } from '../config/config.ts';
import { DatabaseUnusable } from '../store/database-unusable.ts';
import { openPetStore } from '../store/open-store.ts';
import type { OpenedStore } from '../store/open-store.ts';
import { unreachableDatabase } from './start-failure.ts';

/**
 * Opens the store (migrating it when asked), runs `work`, and closes it whatever happens. Maintenance
 * is no request: on PostgreSQL it runs without the statement timeout, so replaying a long log is never
 * cancelled half way.
 */
export async function withDatabase<T>(database: DatabaseConfig, migrate: boolean, work: (store: OpenedStore) => Promise<T>): Promise<T> {
  const store = await openPetStore(database.kind === 'postgres' ? { ...database, statementTimeoutMs: 0 } : database, { migrate }).catch((error: unknown) => {
    throw unreachableDatabase(database, error) ?? error;
  });
  try {
    if (!migrate) {
      await store.reachable().catch((error: unknown) => {
        throw unreachableDatabase(database, error) ?? error;
      });
    }
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * Refuses a SQLite file that is not there, naming it: a command that only reads (or changes what must
 * already exist) would otherwise leave an empty database behind, in whatever folder it ran from.
 */
export function requireExistingDatabase(database: DatabaseConfig): void {
  if (database.kind === 'sqlite' && (database.path === ':memory:' || !existsSync(database.path))) {
    throw new DatabaseUnusable(`the database ${database.path} (PETSTORE_DATABASE) does not exist: run petstore migrate or start the service to create it, or set PETSTORE_DATABASE`);
  }
}

/** `withDatabase` on a database the environment configures that must exist already. */
export function withExistingDatabase<T>(environment: Readonly<Record<string, string | undefined>>, work: (store: OpenedStore) => Promise<T>): Promise<T> {
  const { database } = loadConfig(environment);
  requireExistingDatabase(database);
  return withDatabase(database, true, work);
}

/** `withDatabase` on the database the environment configures (PETSTORE_DATABASE). */
export function withConfiguredDatabase<T>(
  environment: Readonly<Record<string, string | undefined>>, migrate: boolean, work: (store: OpenedStore) => Promise<T>,
): Promise<T> {
  return withDatabase(loadConfig(environment).database, migrate, work);
}
