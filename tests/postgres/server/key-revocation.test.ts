import { describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../../adapters/config/config.ts';
import { createManagedApiKeys } from '../../../adapters/api-keys/key-table.ts';
import { openPetStore } from '../../../adapters/store/open-store.ts';
import { checkRevokedKeyStops } from '../../support/key-revocation.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { startTestService } from '../../support/test-service.ts';
import type { TestService } from '../../support/test-service.ts';
import { FAST_WEBHOOKS } from '../../support/webhook-load.ts';

describe('a key revoked on PostgreSQL with two instances', () => {
  it('ends its event streams on every instance and disables its subscriptions when the CLI revokes it', { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const instances: TestService[] = [];
    const cli = await openPetStore(loadConfig({ PETSTORE_DATABASE: database.url }).database, { logger: pino({ level: 'silent' }) });
    try {
      for (let index = 0; index < 2; index++) instances.push(await startTestService({ ...FAST_WEBHOOKS, PETSTORE_DATABASE: database.url }));
      const keys = createManagedApiKeys(cli.apiKeyTable);
      await checkRevokedKeyStops(instances, { revoke: (id) => keys.revoke(id, new Date()), subscriptions: cli.webhookSubscriptions });
    } finally {
      for (const instance of instances) await instance.stop();
      await cli.close();
      await database.drop();
    }
  });
});
