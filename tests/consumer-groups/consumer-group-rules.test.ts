import { describe } from 'node:test';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { consumerGroupRules, sqlGroupStore } from '../support/consumer-group-rules.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

describe('consumer groups on SQLite, two processes\' stores on one file', () => {
  consumerGroupRules(async () => {
    const opened = await openTemporaryStore('sqlite');
    const second = await openSqlitePetStore(opened.file);
    return {
      first: sqlGroupStore(opened.store),
      second: sqlGroupStore(second),
      async close() {
        await second.close();
        await opened.close();
      },
    };
  });
});
