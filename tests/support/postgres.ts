import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresPetStore, openPostgresPetStore } from '../../adapters/store/postgres/postgres-pet-store.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import { pgliteKysely } from './pglite-pool.ts';

/** Set by scripts/run-tests.mjs (through scripts/postgres-cluster.ts). */
const serverUrl = () => process.env.PETSTORE_TEST_POSTGRES_URL;
const onPglite = () => process.env.PETSTORE_TEST_POSTGRES === 'pglite';

const HOW = 'PostgreSQL tests run through `node scripts/run-tests.mjs <files>` (what npm test runs), which starts a throwaway cluster';

/** Which engine the PostgreSQL tests run on in this run. */
export function testPostgresEngine(): 'server' | 'pglite' {
  if (serverUrl()) return 'server';
  if (onPglite()) return 'pglite';
  throw new Error(`no PostgreSQL for this test: ${HOW}`);
}

export interface TestDatabase {
  /** A URL to a new, empty database of its own. */
  readonly url: string;
  /** Drops the database, cutting any connection still open. */
  drop(): Promise<void>;
}

/** A new empty database on the throwaway server (for tests that need a real server). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = serverUrl();
  if (!admin) throw new Error(`this test needs a PostgreSQL server, not PGlite: ${HOW}`);
  const name = `petstore_${randomBytes(6).toString('hex')}`;
  await withAdmin(admin, (client) => client.query(`create database ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin(admin, (client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestStore {
  readonly store: SqlPetStore;
  /** The database's URL; undefined on PGlite, which lives in this process only. */
  readonly url: string | undefined;
  close(): Promise<void>;
}

/** A migrated pet store on a new empty PostgreSQL database: the server's, or PGlite. */
export async function openTestPostgresStore(options: { poolSize?: number; statementTimeoutMs?: number } = {}): Promise<TestStore> {
  if (testPostgresEngine() === 'pglite') {
    const store = await createPostgresPetStore(pgliteKysely());
    return { store, url: undefined, close: () => store.close() };
  }
  const database = await createTestDatabase();
  const store = await openPostgresPetStore({ url: database.url, poolSize: options.poolSize ?? 10, statementTimeoutMs: options.statementTimeoutMs ?? 10_000 });
  return {
    store,
    url: database.url,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}
