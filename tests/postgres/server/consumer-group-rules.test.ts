import { describe } from 'node:test';
import { openPostgresPetStore } from '../../../adapters/store/postgres/postgres-pet-store.ts';
import { consumerGroupRules, sqlGroupStore } from '../../support/consumer-group-rules.ts';
import { createTestDatabase } from '../../support/postgres.ts';

describe('consumer groups on PostgreSQL, two instances on one database', () => {
  consumerGroupRules(async () => {
    const database = await createTestDatabase();
    const settings = { url: database.url, poolSize: 4, statementTimeoutMs: 10_000 };
    const first = await openPostgresPetStore(settings);
    const second = await openPostgresPetStore(settings, { migrate: false });
    return {
      first: sqlGroupStore(first),
      second: sqlGroupStore(second),
      async close() {
        await Promise.all([first.close(), second.close()]);
        await database.drop();
      },
    };
  });
});
