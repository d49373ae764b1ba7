import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestDatabase } from '../../support/postgres.ts';
import type { TestDatabase } from '../../support/postgres.ts';
import { readError, startTestService } from '../../support/test-service.ts';
import type { TestService } from '../../support/test-service.ts';

const TIMEOUT_MS = 1500;
/** Room for the machine's own delays; waiting for a connection and then a whole timeout takes twice the timeout. */
const BOUND_MS = TIMEOUT_MS * 1.5;

describe('PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS bounds a request as a whole', () => {
  let database: TestDatabase;
  let api: TestService;
  before(async () => {
    database = await createTestDatabase();
    api = await startTestService({
      PETSTORE_DATABASE: database.url, PETSTORE_DATABASE_POOL_SIZE: '2', PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS),
    });
  });
  after(async () => {
    await api?.stop();
    await database?.drop();
  });

  it('answers 503 within the timeout when it first waited for a connection held by statements stuck on a lock', async () => {
    const created = await api.createPet({ name: 'Locked out', categoryId: 1 });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: number };
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table pets in access exclusive mode');
      const started = performance.now();
      // Two requests take the pool's two connections and wait on the lock; the others wait for a connection first.
      const answers = await Promise.all(Array.from({ length: 4 }, async () => {
        const response = await api.request(`/v1/pets/${id}`);
        return { response, elapsed: performance.now() - started, error: response.status === 503 ? await readError(response) : undefined };
      }));
      for (const { response, elapsed, error } of answers) {
        assert.equal(response.status, 503);
        assert.equal(error?.code, 'unavailable');
        assert.ok(response.headers.get('retry-after'));
        assert.ok(elapsed < BOUND_MS, `answered after ${Math.round(elapsed)} ms, with a timeout of ${TIMEOUT_MS} ms`);
      }
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    assert.equal((await api.request(`/v1/pets/${id}`)).status, 200);
  });
});
