import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { parseSafeInteger } from '../../adapters/store/postgres/postgres-pool.ts';
import type { PetStoreDatabase } from '../../adapters/store/schema.ts';

const INT8 = 20;

/**
 * PGlite (PostgreSQL compiled to WebAssembly, in this process) behind Kysely's own PostgresDialect.
 * PGlite is one session, so the "pool" lends it to one user at a time: a transaction keeps it until
 * it releases it, as it would keep a pooled connection.
 */
export function pgliteAsPool(pglite: PGlite): PostgresPool {
  let queue: Promise<void> = Promise.resolve();
  return {
    async connect() {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const turn = queue;
      queue = queue.then(() => released);
      await turn;
      const client = {
        async query(sql: string, parameters: readonly unknown[]) {
          const result = await pglite.query(sql, [...parameters]);
          return { command: result.command, rowCount: result.affectedRows ?? 0, rows: result.rows } as PostgresQueryResult<unknown>;
        },
        release,
      };
      return client as PostgresPoolClient;
    },
    end: () => pglite.close(),
  };
}

/** A fresh, empty in-memory PGlite database under Kysely, bigint parsed as on the server. */
export function pgliteKysely(): Kysely<PetStoreDatabase> {
  const pglite = new PGlite({ parsers: { [INT8]: parseSafeInteger } });
  return new Kysely<PetStoreDatabase>({ dialect: new PostgresDialect({ pool: pgliteAsPool(pglite) }) });
}
