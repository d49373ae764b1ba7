import { describe } from 'node:test';
import { idempotencyExpiryCases } from '../../support/idempotency-expiry-cases.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { openTemporaryStore } from '../../support/temporary-store.ts';
import { startTestService } from '../../support/test-service.ts';

describe('expired Idempotency-Key records on PostgreSQL', () => {
  idempotencyExpiryCases(() => openTemporaryStore('postgres'), async (environment) => {
    const database = await createTestDatabase();
    const api = await startTestService({ ...environment, PETSTORE_DATABASE: database.url });
    return {
      ...api,
      async stop() {
        await api.stop();
        await database.drop();
      },
    };
  });
});
