import { describe, it } from 'node:test';
import { checkGroupAcrossKill } from '../../support/consumer-group-crash.ts';
import { createTestDatabase } from '../../support/postgres.ts';

describe('a consumer group on PostgreSQL with two instances', () => {
  it('four consumers over two instances, one killed (SIGKILL): every event acked once in the end, in per-pet order, and the checkpoint reaches the head', { timeout: 180_000 }, async (t) => {
    const database = await createTestDatabase();
    try {
      await checkGroupAcrossKill({ PETSTORE_DATABASE: database.url }, { signal: t.signal });
    } finally {
      await database.drop();
    }
  });
});
