import { describe, it } from 'node:test';
import { openSqlite } from '../../adapters/store/sqlite/open-sqlite.ts';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { checkGroupStateCarriedOver, GROUP_STATE_MOVES } from '../support/consumer-group-migration.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';

describe('SQLite migration of consumer groups', () => {
  for (const [when, stateBefore] of GROUP_STATE_MOVES) {
    it(`carries every leased, parked and waiting event over ${when}`, async () => {
      const directory = temporaryDirectory('group-migration');
      try {
        const file = directory.file('petstore.db');
        const opened = await openSqlite(file, { migrate: false });
        try {
          await stateBefore(opened.db);
        } finally {
          await opened.db.destroy();
        }
        const store = await openSqlitePetStore(file);
        try {
          await checkGroupStateCarriedOver(store);
        } finally {
          await store.close();
        }
      } finally {
        directory.remove();
      }
    });
  }
});
