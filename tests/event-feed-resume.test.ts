import { after, before, describe, it } from 'node:test';
import { checkResumingConsumers } from './support/event-feed-resume.ts';
import { startTestService, TEST_API_KEY } from './support/test-service.ts';
import type { TestService } from './support/test-service.ts';

describe('the event stream on SQLite, property: consumers that disconnect at random points and resume', () => {
  let api: TestService;
  before(async () => {
    api = await startTestService();
  });
  after(() => api.stop());

  it('end with exactly the log, in order, while writers write concurrently', { timeout: 120_000 }, async () => {
    await checkResumingConsumers(api.baseUrl, TEST_API_KEY);
  });
});
