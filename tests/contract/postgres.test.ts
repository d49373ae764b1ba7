import { openTestPostgresStore, testPostgresEngine } from '../support/postgres.ts';
import { petStoreContract } from './pet-store-contract.ts';

petStoreContract(`PostgreSQL (${testPostgresEngine() === 'server' ? 'server' : 'PGlite'})`, async () => {
  const { store, close } = await openTestPostgresStore();
  return { ports: store, close };
});
