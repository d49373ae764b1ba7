import type { Logger } from 'pino';
import type { DatabaseConfig } from '../config/config.ts';
import type { SqlPetStore } from './sql-pet-store.ts';
import { openSqlitePetStore } from './sqlite/sqlite-pet-store.ts';
import type { WriteObserver } from './write-observer.ts';

export interface OpenPetStoreOptions {
  readonly migrate?: boolean;
  readonly logger?: Logger;
  /** Hears of each write where the store commits in groups (SQLite). */
  readonly observeWrite?: WriteObserver | undefined;
  /**
   * For the service: a damaged SQLite file is refused at the start, and the store's reading connection
   * only reads. Maintenance commands leave it out and write on it too.
   */
  readonly serving?: boolean;
}

/** The store the configuration names: a SQLite file or a PostgreSQL database (its driver loaded only then). */
export async function openPetStore(database: DatabaseConfig, options: OpenPetStoreOptions = {}): Promise<SqlPetStore> {
  const migrate = options.migrate === undefined ? {} : { migrate: options.migrate };
  if (database.kind === 'sqlite') {
    return openSqlitePetStore(database.path, { ...migrate, observeWrite: options.observeWrite, ...(options.serving ? { checkAtOpen: true, readsOnly: true } : {}) });
  }
  const { openPostgresPetStore } = await import('./postgres/postgres-pet-store.ts');
  return openPostgresPetStore(database, { ...migrate, ...(options.logger ? { logger: options.logger } : {}) });
}
