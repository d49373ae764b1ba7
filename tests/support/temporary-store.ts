import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';
import type { InMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import type { SqliteConnection } from '../../adapters/store/sqlite/sqlite-connection.ts';

/**
 * Every backend the pet store runs on. A test opens a fresh, empty, migrated store on one of them in
 * `before` and closes it in `after`, whatever the backend; PostgreSQL is there when the run started one
 * (scripts/run-tests.mjs does for tests/postgres/ and tests/contract/postgres.test.ts).
 */
export const BACKENDS = ['memory', 'sqlite', 'postgres'] as const;
export type Backend = (typeof BACKENDS)[number];

export interface TemporaryDirectory {
  readonly path: string;
  /** A path inside the directory (nothing is created). */
  file(name: string): string;
  /** Removes the directory and everything in it; safe to call twice. */
  remove(): void;
}

/** A new empty directory under the system's temporary one, named `petstore-<purpose>-…`. */
export function temporaryDirectory(purpose: string): TemporaryDirectory {
  const path = mkdtempSync(join(tmpdir(), `petstore-${purpose}-`));
  return {
    path,
    file: (name) => join(path, name),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** A SQLite store and a second connection to its file, which holds the write lock as another process would. */
export interface SqliteStoreBesideLockHolder {
  readonly store: SqlitePetStore;
  readonly other: SqliteConnection;
  /** Ends the other connection's transaction, closes both and removes the file's directory. */
  close(): Promise<void>;
}

export async function openSqliteStoreBesideLockHolder(purpose: string, options: { lockWaitMs: number }): Promise<SqliteStoreBesideLockHolder> {
  const directory = temporaryDirectory(purpose);
  const store = await openSqlitePetStore(directory.file('store.db'), options);
  const other = await openSqliteConnection(directory.file('store.db'));
  return {
    store,
    other,
    async close() {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await store.close();
      directory.remove();
    },
  };
}

interface Opened<B extends Backend, S> {
  readonly backend: B;
  readonly store: S;
  /** Closes the store and removes what it left behind (the SQLite file's directory, the PostgreSQL database). */
  close(): Promise<void>;
}

export type TemporaryMemoryStore = Opened<'memory', InMemoryPetStore>;

export interface TemporarySqliteStore extends Opened<'sqlite', SqlitePetStore> {
  /** The database file, for a second connection or another process. */
  readonly file: string;
  /** The directory holding the file (and its -wal and -shm files), removed by `close`. */
  readonly directory: string;
}

export interface TemporaryPostgresStore extends Opened<'postgres', SqlPetStore> {
  /** The database's URL, for another connection or process; undefined on PGlite, which lives in this process only. */
  readonly url: string | undefined;
}

export type TemporaryStore = TemporaryMemoryStore | TemporarySqliteStore | TemporaryPostgresStore;

export interface TemporaryStoreOptions {
  /** PostgreSQL server only: the pool's size and statement timeout. */
  readonly poolSize?: number;
  readonly statementTimeoutMs?: number;
}

/** A fresh, empty pet store on `backend`, migrated; `close` removes every trace of it. */
export function openTemporaryStore(backend: 'memory', options?: TemporaryStoreOptions): Promise<TemporaryMemoryStore>;
export function openTemporaryStore(backend: 'sqlite', options?: TemporaryStoreOptions): Promise<TemporarySqliteStore>;
export function openTemporaryStore(backend: 'postgres', options?: TemporaryStoreOptions): Promise<TemporaryPostgresStore>;
export function openTemporaryStore(backend: Backend, options?: TemporaryStoreOptions): Promise<TemporaryStore>;
export async function openTemporaryStore(backend: Backend, options: TemporaryStoreOptions = {}): Promise<TemporaryStore> {
  switch (backend) {
    case 'memory':
      return { backend, store: createInMemoryPetStore(), close: async () => {} };
    case 'sqlite': {
      const directory = temporaryDirectory('store');
      const file = directory.file('store.db');
      const store = await openSqlitePetStore(file).catch((error: unknown) => {
        directory.remove();
        throw error;
      });
      return {
        backend,
        store,
        file,
        directory: directory.path,
        async close() {
          try {
            await store.close();
          } finally {
            directory.remove();
          }
        },
      };
    }
    case 'postgres': {
      // Loaded only here: the PostgreSQL driver and PGlite are no concern of a run without PostgreSQL (Deno's included).
      const { openTestPostgresStore } = await import('./postgres.ts');
      return { backend, ...(await openTestPostgresStore(options)) };
    }
  }
}
