import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createPostgresPool } from '../../../adapters/store/postgres/postgres-pool.ts';
import { addPet } from '../../../application/index.ts';
import { postgresCommits, readLogHead } from '../../../adapters/store/postgres/postgres-commits.ts';
import { LOG_END } from '../../../adapters/store/sql-event-log.ts';
import { openPostgresPetStore } from '../../../adapters/store/postgres/postgres-pet-store.ts';
import { capturedLog } from '../../support/captured-log.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import type { TestDatabase } from '../../support/postgres.ts';

/** Ends the server processes of this database's connections named `application_name`, as a crash or restart would (other tests' databases share the server). */
async function terminate(url: string, applicationName: string): Promise<number> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database() and pid <> pg_backend_pid()', [applicationName]);
    return rows.length;
  } finally {
    await admin.end();
  }
}

/** The connection listening for commits, if any: its state and the last statement it ran (LISTEN first). */
async function listener(url: string): Promise<{ state: string; query: string } | undefined> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query("select state, query from pg_stat_activity where application_name = 'petstore-log-listener' and datname = current_database()");
    return rows[0];
  } finally {
    await admin.end();
  }
}

describe('database connections that die', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  it('survives a pooled connection that dies while a request holds it, and serves the next request on a new one', async () => {
    const { logger, lines } = capturedLog();
    const pool = createPostgresPool({ url: database.url, poolSize: 2, statementTimeoutMs: 2000 }, logger);
    try {
      const client = await pool.connect();
      await client.query('select 1');
      const ended = new Promise((resolve) => client.once('end', resolve));
      assert.equal(await terminate(database.url, 'petstore'), 1);
      await ended;
      client.release(true);
      assert.deepEqual((await pool.query('select 2 as two')).rows, [{ two: 2 }]);
      // And one that dies while idle is logged in a line, not with the client it belonged to.
      assert.equal(await terminate(database.url, 'petstore'), 1);
      while (lines.length === 0) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(lines[0]!.msg, 'an idle database connection failed; it was dropped');
      assert.ok(JSON.stringify(lines[0]).length < 400, `a log line of ${JSON.stringify(lines[0]).length} characters`);
    } finally {
      await pool.end();
    }
  });

  it('listens for commits again after its listening connection dies, and logs the fault in a short line', async () => {
    const { logger, lines } = capturedLog();
    const store = await openPostgresPetStore({ url: database.url, poolSize: 2, statementTimeoutMs: 2000 }, { logger });
    const signal = postgresCommits(store.db, { url: database.url, statementTimeoutMs: 2000, logger, pollMs: 60_000 });
    const heard: (number | undefined)[] = [];
    let told = () => {};
    const stop = signal.onCommitted(({ last }) => {
      heard.push(last);
      told();
    });
    try {
      // Idle after its first look, so that the server's reason reaches the connection rather than a statement.
      for (;;) {
        const now = await listener(database.url);
        if (now?.state === 'idle' && now.query === LOG_END.postgres) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(await terminate(database.url, 'petstore-log-listener'), 1);
      while (!lines.some((line) => line.msg.startsWith('the connection listening for commits failed'))) await new Promise((resolve) => setTimeout(resolve, 20));
      const line = lines.find((entry) => entry.msg.startsWith('the connection listening for commits failed'))!;
      assert.ok(JSON.stringify(line).length < 400, `a log line of ${JSON.stringify(line).length} characters`);
      assert.match(line.reason, /terminat/i);
      // Listening again: a commit is heard (the head is not polled meanwhile).
      while (!(await listener(database.url))?.query) await new Promise((resolve) => setTimeout(resolve, 20));
      const first = new Promise<void>((resolve) => (told = resolve));
      await addPet(store, { name: 'after the connection died', categoryId: 1 });
      await first;
      assert.equal(heard.at(-1), await readLogHead(store.db));
    } finally {
      stop();
      await signal.close();
      await store.close();
    }
  });
});
