import { after, before, describe, it } from 'node:test';
import { checkResumingConsumers } from '../../support/event-feed-resume.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import type { TestDatabase } from '../../support/postgres.ts';
import { startTestService, TEST_API_KEY } from '../../support/test-service.ts';
import type { TestService } from '../../support/test-service.ts';

describe('the event stream on PostgreSQL, property: consumers that disconnect at random points and resume', () => {
  let database: TestDatabase;
  let api: TestService;
  before(async () => {
    database = await createTestDatabase();
    api = await startTestService({ PETSTORE_DATABASE: database.url });
  });
  after(async () => {
    await api.stop();
    await database.drop();
  });

  it('end with exactly the log, in order, while writers write concurrently', { timeout: 120_000 }, async () => {
    await checkResumingConsumers(api.baseUrl, TEST_API_KEY);
  });
});
