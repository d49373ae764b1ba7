import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPostgresPool, prepared } from '../../../adapters/store/postgres/postgres-pool.ts';
import { createTestDatabase } from '../../support/postgres.ts';

describe('statements prepared once a connection', () => {
  it('runs a text marked prepared as a named statement, parsed once, and any other text as it is', async () => {
    const database = await createTestDatabase();
    const pool = createPostgresPool({ url: database.url, poolSize: 1, statementTimeoutMs: 10_000 });
    try {
      const hot = prepared('select $1::integer + 1 as next');
      const client = await pool.connect();
      try {
        assert.equal((await client.query(hot, [1])).rows[0].next, 2);
        assert.equal((await client.query(hot, [41])).rows[0].next, 42);
        await client.query('select $1::integer as plain', [1]);
        const { rows } = await client.query<{ statement: string }>('select statement from pg_prepared_statements');
        assert.deepEqual(rows.map((row) => row.statement), [hot]);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});
