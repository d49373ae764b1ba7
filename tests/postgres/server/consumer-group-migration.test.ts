import { describe, it } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { openPostgresPetStore } from '../../../adapters/store/postgres/postgres-pet-store.ts';
import { checkGroupStateCarriedOver, GROUP_STATE_MOVES } from '../../support/consumer-group-migration.ts';
import { createTestDatabase } from '../../support/postgres.ts';

describe('PostgreSQL migration of consumer groups', () => {
  for (const [when, stateBefore] of GROUP_STATE_MOVES) {
    it(`carries every leased, parked and waiting event over ${when}`, async () => {
      const database = await createTestDatabase();
      try {
        const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }) });
        try {
          await stateBefore(db);
        } finally {
          await db.destroy();
        }
        const store = await openPostgresPetStore({ url: database.url, poolSize: 2, statementTimeoutMs: 10_000 });
        try {
          await checkGroupStateCarriedOver(store);
        } finally {
          await store.close();
        }
      } finally {
        await database.drop();
      }
    });
  }
});
