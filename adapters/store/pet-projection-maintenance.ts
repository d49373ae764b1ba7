import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { SqlDialect } from './sql-dialect.ts';
import { logPages, logPagesAhead, replay, ReplayedPets } from './pet-replay.ts';
import type { ReplayedPet } from './pet-replay.ts';
import { countEvents, streamsWrittenAfter } from './sql-event-log.ts';
import { columnsOf, createDeclaredTable, PETS } from './schema.ts';
import type { PetStoreDatabase } from './schema.ts';

/** The database and its dialect: what the maintenance needs of an open store. */
export interface MaintainedStore {
  readonly db: Kysely<PetStoreDatabase>;
  readonly dialect: SqlDialect;
}

export type Progress = (done: number, total: number) => void;

/** Reports each page to `onProgress`, against the number of events in the log when it starts. */
async function progressOf(db: Kysely<PetStoreDatabase>, onProgress: Progress | undefined): Promise<((events: number) => void) | undefined> {
  if (!onProgress) return undefined;
  const n = await countEvents(db);
  const total = Number(n);
  let done = 0;
  return (events) => onProgress((done += events), total);
}

// SQLite allows 32766 parameters in one statement.
const ROWS_PER_INSERT = Math.floor(32_000 / columnsOf(PETS).length);
// Rows a transaction beside the service: each commit waits for the disk, and writers wait for each transaction.
const ROWS_PER_TRANSACTION = 4 * ROWS_PER_INSERT;

/**
 * Writes pets into the table `into`, which has none of their ids. `inTransactions`: in short
 * transactions of their own, so that service writers get the lock between them.
 */
async function insertPets(db: Kysely<PetStoreDatabase>, dialect: SqlDialect, into: string, pets: readonly ReplayedPet[], inTransactions: boolean): Promise<void> {
  const insert = async (executor: Kysely<PetStoreDatabase>, from: number, to: number) => {
    for (let start = from; start < to; start += ROWS_PER_INSERT) {
      await dialect.insertPetRows(executor, into, pets.slice(start, Math.min(to, start + ROWS_PER_INSERT)));
    }
  };
  if (!inTransactions) return insert(db, 0, pets.length);
  for (let start = 0; start < pets.length; start += ROWS_PER_TRANSACTION) {
    const end = Math.min(pets.length, start + ROWS_PER_TRANSACTION);
    await db.transaction().execute((trx) => insert(trx, start, end));
  }
}

/**
 * Rebuilds `pets` from the whole log and swaps it in atomically. The bulk of the replay runs without
 * a lock; then, in a transaction during which no append can commit, it applies the events that
 * arrived meanwhile and swaps the result in (the table on SQLite, its rows on PostgreSQL). Writers
 * wait for that last step only; readers see the old read model or the new one, never a half.
 * Replaying by position skips nothing: on every dialect, positions are handed out in commit order.
 */
export async function rebuildPetProjection({ db, dialect }: MaintainedStore, onProgress?: Progress): Promise<{ events: number; pets: number }> {
  const pets = new ReplayedPets();
  const replayed = await replay(await logPagesAhead(db, dialect, 0), pets, 0, await progressOf(db, onProgress));

  await sql`drop table if exists pets_rebuild`.execute(db);
  await createDeclaredTable(db, PETS, 'pets_rebuild', { temporary: false });
  await insertPets(db, dialect, 'pets_rebuild', pets.list(), true);

  return db.connection().execute(async (connection) => {
    await dialect.beginExclusive(connection);
    try {
      // Events committed since the replay: their pets' rows go, and come back with those events applied.
      const written = await idsWrittenAfter(connection, replayed.last);
      const tail = new ReplayedPets();
      for (const id of written) {
        const known = pets.get(id);
        if (known) tail.set({ ...known });
      }
      const { events } = await replay(logPages(connection, dialect, replayed.last), tail, replayed.last);
      for (let start = 0; start < written.length; start += IDS_PER_DELETE) {
        await connection.deleteFrom('pets_rebuild' as 'pets').where('id', 'in', written.slice(start, start + IDS_PER_DELETE)).execute();
      }
      const tailPets = tail.list();
      await insertPets(connection, dialect, 'pets_rebuild', tailPets, false);
      await dialect.swapInPets(connection, 'pets_rebuild');
      await sql`commit`.execute(connection);
      for (const pet of tailPets) pets.set(pet);
      return { events: replayed.events + events, pets: pets.size };
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}

// Well under SQLite's 32766 parameters a statement.
const IDS_PER_DELETE = 10_000;

async function idsWrittenAfter(db: Kysely<PetStoreDatabase>, afterPosition: number): Promise<number[]> {
  return (await streamsWrittenAfter(db, afterPosition)).map((streamId) => Number(streamId.slice('pet-'.length)));
}

export interface ProjectionDifference {
  readonly id: number;
  readonly kind: 'missing' | 'unexpected' | 'different';
  /** The row as the log says it should be. */
  readonly expected?: Record<string, unknown>;
  /** The row as the live read model has it. */
  readonly actual?: Record<string, unknown>;
}

/**
 * Rebuilds the read model from the log into a scratch (temporary) table and compares it row by row
 * with the live `pets`, all inside one read transaction so concurrent writers cannot cause false alarms.
 */
export async function verifyPetProjection({ db, dialect }: MaintainedStore, onProgress?: Progress): Promise<ProjectionDifference[]> {
  return db.connection().execute(async (connection) => {
    await dialect.beginSnapshot(connection);
    try {
      const pets = new ReplayedPets();
      await replay(logPages(connection, dialect, 0), pets, 0, await progressOf(connection, onProgress));
      // Unqualified names: the temporary table shadows nothing, and `pets` is the live one.
      await createDeclaredTable(connection, PETS, 'pets_verify', { temporary: true });
      await insertPets(connection, dialect, 'pets_verify', pets.list(), false);
      const columns = columnsOf(PETS).join(', ');
      const expectedOnly = await sql.raw<Record<string, unknown> & { id: number }>(`select ${columns} from pets_verify except select ${columns} from pets`).execute(connection);
      const actualOnly = await sql.raw<Record<string, unknown> & { id: number }>(`select ${columns} from pets except select ${columns} from pets_verify`).execute(connection);
      const byId = new Map<number, { expected?: Record<string, unknown>; actual?: Record<string, unknown> }>();
      for (const row of expectedOnly.rows) byId.set(row.id, { ...byId.get(row.id), expected: row });
      for (const row of actualOnly.rows) byId.set(row.id, { ...byId.get(row.id), actual: row });
      return [...byId.entries()]
        .sort(([a], [b]) => a - b)
        .map(([id, { expected, actual }]): ProjectionDifference => {
          const kind = expected && actual ? 'different' : expected ? 'missing' : 'unexpected';
          return { id, kind, ...(expected ? { expected } : {}), ...(actual ? { actual } : {}) };
        });
    } finally {
      await sql`rollback`.execute(connection);
    }
  });
}
