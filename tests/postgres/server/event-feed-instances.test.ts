import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { addPet } from '../../../application/index.ts';
import { postgresCommits } from '../../../adapters/store/postgres/postgres-commits.ts';
import { openPostgresPetStore } from '../../../adapters/store/postgres/postgres-pet-store.ts';
import { createPostgresPool } from '../../../adapters/store/postgres/postgres-pool.ts';
import type { PetStoreDatabase } from '../../../adapters/store/schema.ts';
import { checkStreamSeesEveryInstance } from '../../support/event-feed-instances.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';

const KEY = 'feed-instances-key-0123456789';

describe('the event feed across instances on one PostgreSQL database', () => {
  it("another instance's commit is notified with its position, on commit, without the fallback poll", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const writer = await openPostgresPetStore({ url: database.url, poolSize: 2, statementTimeoutMs: 10_000 });
    const db = new Kysely<PetStoreDatabase>({ dialect: new PostgresDialect({ pool: createPostgresPool({ url: database.url, poolSize: 1, statementTimeoutMs: 10_000 }) }) });
    // The poll an hour apart: only the notification can tell of the commit within the test.
    const signal = postgresCommits(db, { url: database.url, pollMs: 3_600_000 });
    try {
      const heard: (number | undefined)[] = [];
      let told: () => void = () => {};
      const unsubscribe = signal.onCommitted(({ last }) => {
        heard.push(last);
        told();
      });
      // Wait until the listening connection has run LISTEN, so that the commit below can be heard only through it.
      // LISTEN is its first statement; the look it runs next replaces it in pg_stat_activity, so any statement at all will do.
      for (;;) {
        const { rows } = await sql<{ listening: number }>`
          select count(*)::int as listening from pg_stat_activity
          where application_name = 'petstore-log-listener' and query <> '' and datname = current_database()`.execute(db);
        if (rows[0]!.listening > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.deepEqual(heard, [], 'nothing committed yet');
      const arrived = new Promise<void>((resolve) => (told = resolve));
      await addPet(writer, { name: 'noticed', categoryId: 1 });
      let bound: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([arrived, new Promise((_, reject) => (bound = setTimeout(() => reject(new Error('no notification of the commit')), 15_000)))]);
      clearTimeout(bound);
      const [head] = await writer.eventLog.readLog({ after: 0, limit: 1 });
      assert.deepEqual(heard, [head!.position]);
      unsubscribe();
    } finally {
      await signal.close();
      await db.destroy();
      await writer.close();
      await database.drop();
    }
  });

  it('a stream held open on one service sees every write made through the others, in order', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    const services: ServiceProcess[] = [];
    try {
      const environment = { PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: KEY };
      services.push(startServiceProcess(environment));
      const first = await services[0]!.listening;
      services.push(startServiceProcess(environment), startServiceProcess(environment));
      const others = await Promise.all(services.slice(1).map((service) => service.listening));
      await checkStreamSeesEveryInstance([first, ...others], KEY);
    } finally {
      for (const service of services) service.cleanup();
      await database.drop();
    }
  });
});
