import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { addPet } from '../../../application/index.ts';
import type { RowChange } from '../../../application/index.ts';
import { LOG_END } from '../../../adapters/store/sql-event-log.ts';
import { openTestPostgresStore } from '../../support/postgres.ts';

/** What the instance's listening connection last ran, once it listens. */
async function listenerQuery(client: pg.Client): Promise<string | undefined> {
  const { rows } = await client.query<{ query: string }>(
    "select query from pg_stat_activity where datname = current_database() and application_name = 'petstore-log-listener'",
  );
  return rows[0]?.query;
}

describe("the listing cache's look at the log on PostgreSQL", () => {
  it('runs on the listening connection, so it waits behind no query of the pool', async () => {
    const opened = await openTestPostgresStore({ poolSize: 1 });
    const observer = new pg.Client({ connectionString: opened.url });
    await observer.connect();
    try {
      const changes = opened.store.commits;
      const heard: (readonly RowChange[] | undefined)[] = [];
      changes.onCommitted(({ changes: changed }) => heard.push(changed));
      // Its first statement is LISTEN: any statement at all means it listens.
      for (let tries = 0; !(await listenerQuery(observer)); tries++) {
        assert.ok(tries < 200, 'the store listens for commits');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await changes.refresh();
      const pet = await addPet(opened.store, { name: 'looked for', categoryId: 1, status: 'available' });

      // The pool's only connection is busy until this statement ends; the look must not need it.
      const finished: string[] = [];
      const holding = sql`select pg_sleep(1)`.execute(opened.store.db).then(() => finished.push('pool'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await changes.refresh();
      finished.push('look');
      await holding;

      assert.deepEqual(finished, ['look', 'pool']);
      assert.ok(heard.some((changed) => changed?.some((change) => change.id === pet.id)), 'the look told the new pet');
      // Its last look asked where the log ends; the one before read the new pet's event.
      assert.equal(await listenerQuery(observer), LOG_END.postgres);
    } finally {
      await observer.end();
      await opened.close();
    }
  });
});
