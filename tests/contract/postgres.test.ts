import { openTestPostgresStore, testPostgresEngine } from '../support/postgres.ts';
import { orderStoreContract } from './order-store-contract.ts';
import { petStoreContract } from './pet-store-contract.ts';

const name = `PostgreSQL (${testPostgresEngine() === 'server' ? 'server' : 'PGlite'})`;
async function open() {
  const { store, close } = await openTestPostgresStore();
  return { ports: store, close };
}

petStoreContract(name, open);
orderStoreContract(name, open);
