import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestDatabase } from '../../support/postgres.ts';
import { waitFor } from '../../support/wait-for.ts';
import type { TestDatabase } from '../../support/postgres.ts';
import { readError, startTestService } from '../../support/test-service.ts';
import type { TestService } from '../../support/test-service.ts';

const TIMEOUT_MS = 1500;
/** The promise: every write answered within the statement timeout plus a second. */
const BOUND_MS = TIMEOUT_MS + 1000;

describe('a stalled PostgreSQL backend holding the append lock', () => {
  let database: TestDatabase;
  let api: TestService;
  let observer: pg.Client;
  before(async () => {
    database = await createTestDatabase();
    api = await startTestService({ PETSTORE_DATABASE: database.url, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
    observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
  });
  after(async () => {
    await observer?.end();
    await api?.stop();
    await database?.drop();
  });

  it('answers every write with 503 and Retry-After within the timeout, is not ready meanwhile, and writes again once it runs', async () => {
    assert.equal((await api.createPet({ name: 'Before', categoryId: 1 })).status, 201);
    // A table lock holds the service's group inside its transaction, after it took the append lock: that backend is then stopped.
    await observer.query('begin');
    await observer.query('lock table pets in access exclusive mode');
    const started = performance.now();
    const first = api.createPet({ name: 'Stalled', categoryId: 1 }).then((response) => ({ response, waited: performance.now() - started }));
    const holder = await waitFor(
      async () => (await observer.query<{ pid: number }>("select pid from pg_locks where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())")).rows[0]?.pid,
      (pid) => pid !== undefined, 5000,
    );
    assert.ok(holder !== undefined, 'a group took the append lock');
    process.kill(holder, 'SIGSTOP');
    const resume = setTimeout(() => process.kill(holder, 'SIGCONT'), BOUND_MS + 3000);
    try {
      await observer.query('rollback');
      const arrived = performance.now();
      const writes = await Promise.all(Array.from({ length: 8 }, (_, index) =>
        api.createPet({ name: `During ${index}`, categoryId: 1 }).then((response) => ({ response, waited: performance.now() - arrived }))));
      const asked = performance.now();
      const ready = await api.request('/readyz');
      const readyIn = performance.now() - asked;
      for (const { response, waited } of [await first, ...writes]) {
        assert.equal(response.status, 503, `a write answered ${response.status} after ${Math.round(waited)} ms`);
        assert.equal((await readError(response)).code, 'unavailable');
        assert.ok(response.headers.get('retry-after'), 'Retry-After');
        assert.ok(waited < BOUND_MS, `a write waited ${Math.round(waited)} ms, with a timeout of ${TIMEOUT_MS} ms`);
      }
      assert.ok(readyIn < 1000, `readiness answered in ${Math.round(readyIn)} ms`);
      assert.equal(ready.status, 503, 'not ready while writes cannot commit');
    } finally {
      clearTimeout(resume);
      process.kill(holder, 'SIGCONT');
    }
    const afterwards = await waitFor(() => api.createPet({ name: 'After', categoryId: 1 }), (response) => response.status === 201, 5000);
    assert.equal(afterwards.status, 201);
    assert.equal((await waitFor(() => api.request('/readyz'), (response) => response.status === 200, 5000)).status, 200);
  });
});
