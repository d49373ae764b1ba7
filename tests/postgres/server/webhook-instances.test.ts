import { describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase } from '../../support/postgres.ts';
import { seedFrom } from '../../support/seeded-random.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';
import { startWebhookReceiver } from '../../support/webhook-receiver.ts';
import { checkTakeoverOnKill, FAST_WEBHOOKS, WEBHOOK_TEST_KEY } from '../../support/webhook-load.ts';

describe('webhooks on PostgreSQL with two instances', () => {
  it('one instance at a time delivers a subscription; when it is killed the other takes over, and every event arrives in order', { timeout: 180_000 }, async () => {
    const seed = seedFrom('WEBHOOK_SEED');
    const database = await createTestDatabase();
    const receiver = await startWebhookReceiver();
    const services: ServiceProcess[] = [];
    const client = new pg.Client({ connectionString: database.url });
    try {
      await client.connect();
      // One public address for both (the same `source` in every body), as behind a load balancer.
      const common = { PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: WEBHOOK_TEST_KEY, PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://petstore.test/v1', ...FAST_WEBHOOKS };
      const leaseHolder = async (id: string) => (await client.query<{ lease_holder: string }>('select lease_holder from webhooks where id = $1', [id])).rows[0]!.lease_holder;
      await checkTakeoverOnKill(common, leaseHolder, receiver, seed, (environment) => {
        const service = startServiceProcess(environment);
        services.push(service);
        return service;
      });
    } finally {
      for (const service of services) service.cleanup();
      await client.end().catch(() => undefined);
      await receiver.close();
      await database.drop();
    }
  });
});
