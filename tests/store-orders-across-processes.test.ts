import { describe, it } from 'node:test';
import { raceForOnePet } from './support/orders-race.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

describe('store orders across processes on one SQLite file', () => {
  it('forty clients ordering one pet through two processes get exactly one 201, five times', async () => {
    const directory = temporaryDirectory('orders-race');
    try {
      await raceForOnePet({ PETSTORE_DATABASE: directory.file('petstore.db') }, 5);
    } finally {
      directory.remove();
    }
  });
});
