import { sql } from 'kysely';
import { StoreUnavailable } from '../../application/index.ts';
import type { SqlFlavour } from '../sql/flavour.ts';

/**
 * SQLite: one writer at a time. Every write transaction begins IMMEDIATE (see `sqlite-dialect.ts`),
 * so an append's read of the stream version cannot go stale before its insert, and positions are
 * handed out in commit order without anything further.
 */
export const sqliteFlavour: SqlFlavour = {
  name: 'sqlite',

  translateError(error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) {
      return new StoreUnavailable('the database is busy; try again', { cause: error });
    }
    return error;
  },

  isUniqueViolation(error, constraint) {
    // SQLite names the columns rather than the constraint.
    const { code, message } = error as { code?: unknown; message?: unknown };
    const [expectedCode, columns] = constraint === 'pets_pkey'
      ? ['SQLITE_CONSTRAINT_PRIMARYKEY', 'pets.id']
      : ['SQLITE_CONSTRAINT_UNIQUE', 'events.stream_id, events.stream_version'];
    return code === expectedCode && typeof message === 'string' && message.endsWith(`constraint failed: ${columns}`);
  },

  async insertEvents(trx, rows) {
    await trx.insertInto('events').values([...rows]).execute();
  },

  async nextPetId(trx) {
    const row = await trx
      .updateTable('sequences')
      .set((eb) => ({ value: eb('value', '+', 1) }))
      .where('name', '=', 'pet_id')
      .returning('value')
      .executeTakeFirstOrThrow();
    return row.value;
  },

  async beginExclusive(connection) {
    await sql`begin immediate`.execute(connection);
  },

  async beginSnapshot(connection) {
    // A deferred transaction reads one snapshot from its first read on (WAL).
    await sql`begin`.execute(connection);
  },

  async createPetsTable(executor, name, { temporary }) {
    await sql.raw(`create ${temporary ? 'temp ' : ''}table ${name} (
      id integer primary key, name text not null, category_id integer not null, status text,
      version integer not null, created_at text not null, updated_at text not null)`).execute(executor);
  },

  async swapInPets(connection, from) {
    await sql`drop table pets`.execute(connection);
    await sql.raw(`alter table ${from} rename to pets`).execute(connection);
    await sql`create index pets_status_id on pets (status, id)`.execute(connection);
  },
};
