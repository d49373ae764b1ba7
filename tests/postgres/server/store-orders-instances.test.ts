import { describe, it } from 'node:test';
import { createTestDatabase } from '../../support/postgres.ts';
import { raceForOnePet } from '../../support/orders-race.ts';

describe('store orders across instances on one PostgreSQL database', () => {
  it('forty clients ordering one pet through two instances get exactly one 201, five times', async () => {
    const database = await createTestDatabase();
    try {
      await raceForOnePet({ PETSTORE_DATABASE: database.url, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: '60000' }, 5);
    } finally {
      await database.drop();
    }
  });
});
