import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { orderStoreContract } from './order-store-contract.ts';
import { petStoreContract } from './pet-store-contract.ts';

async function open() {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-contract-'));
  const store = await openSqlitePetStore(join(directory, 'contract.db'));
  return {
    ports: store,
    async close() {
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

petStoreContract('SQLite', open);
orderStoreContract('SQLite', open);
