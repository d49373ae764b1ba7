import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { projectPet } from '../../application/index.ts';
import type { PetRow, StoredEvent } from '../../application/index.ts';
import type { PetStoreDatabase } from './schema.ts';
import { storedEventFromRow } from './stored-rows.ts';

export type Progress = (done: number, total: number) => void;

interface ProjectedPet {
  row: PetRow;
  createdAt: string;
  updatedAt: string;
}

const PAGE = 10_000;

/** Folds events into rows keyed by pet id, exactly as the inline projection would have. */
function fold(into: Map<number, ProjectedPet>, events: readonly StoredEvent[]): void {
  for (const stored of events) {
    const id = stored.event.data.id;
    const current = into.get(id);
    const row = projectPet(current?.row, [stored.event], stored.streamVersion);
    into.set(id, { row, createdAt: current?.createdAt ?? stored.metadata.recordedAt, updatedAt: stored.metadata.recordedAt });
  }
}

/** Replays events after `afterPosition` into `into`, page by page, in position order. Returns the last position seen. */
async function replay(db: Kysely<PetStoreDatabase>, into: Map<number, ProjectedPet>, afterPosition: number, progress?: { report: Progress; total: number; done: number }): Promise<number> {
  let last = afterPosition;
  for (;;) {
    const rows = await db.selectFrom('events').selectAll().where('position', '>', last).orderBy('position').limit(PAGE).execute();
    if (rows.length === 0) return last;
    fold(into, rows.map(storedEventFromRow));
    last = rows.at(-1)!.position;
    if (progress) {
      progress.done += rows.length;
      progress.report(progress.done, progress.total);
    }
  }
}

async function countEvents(db: Kysely<PetStoreDatabase>): Promise<number> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

function toRow({ row, createdAt, updatedAt }: ProjectedPet) {
  return {
    id: row.pet.id, name: row.pet.name, category_id: row.pet.categoryId, status: row.pet.status ?? null,
    version: row.version, created_at: createdAt, updated_at: updatedAt,
  };
}

// 7 values a row; SQLite allows 32766 parameters in one statement.
const ROWS_PER_INSERT = 4000;

/** Writes rows into `table`, replacing any with the same id. `inTransactions`: one short transaction per batch. */
async function writeRows(db: Kysely<PetStoreDatabase>, table: string, pets: readonly ProjectedPet[], inTransactions: boolean): Promise<void> {
  for (let index = 0; index < pets.length; index += ROWS_PER_INSERT) {
    const values = pets.slice(index, index + ROWS_PER_INSERT).map(toRow);
    const insert = (executor: Kysely<PetStoreDatabase>) => executor.replaceInto(table as 'pets').values(values).execute();
    // Short transactions: service writers get the lock between batches.
    if (inTransactions) await db.transaction().execute(insert);
    else await insert(db);
  }
}

const CREATE_LIKE_PETS = (table: string, temporary = false) => sql.raw(`create ${temporary ? 'temp ' : ''}table ${table} (
  id integer primary key, name text not null, category_id integer not null, status text,
  version integer not null, created_at text not null, updated_at text not null)`);

/**
 * Rebuilds `pets` from the whole log and swaps it in atomically. The bulk of the replay runs without
 * a lock; then, holding the write lock, it applies the events that arrived meanwhile and swaps the
 * tables in one transaction. Writers wait for that last step only; readers see the old table or the
 * new one, never a half.
 */
export async function rebuildPetProjection(db: Kysely<PetStoreDatabase>, onProgress?: Progress): Promise<{ events: number; pets: number }> {
  const projected = new Map<number, ProjectedPet>();
  const total = await countEvents(db);
  const progress = onProgress && { report: onProgress, total, done: 0 };
  const replayedUpTo = await replay(db, projected, 0, progress);

  await sql`drop table if exists pets_rebuild`.execute(db);
  await CREATE_LIKE_PETS('pets_rebuild').execute(db);
  await writeRows(db, 'pets_rebuild', [...projected.values()], true);

  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      // Events committed since the replay: start from what those pets were, apply the rest.
      const tail = new Map<number, ProjectedPet>();
      for (const id of await idsWrittenAfter(connection, replayedUpTo)) {
        const known = projected.get(id);
        if (known) tail.set(id, known);
      }
      await replay(connection, tail, replayedUpTo);
      await writeRows(connection, 'pets_rebuild', [...tail.values()], false);
      for (const [id, pet] of tail) projected.set(id, pet);
      await sql`drop table pets`.execute(connection);
      await sql`alter table pets_rebuild rename to pets`.execute(connection);
      await sql`create index pets_status_id on pets (status, id)`.execute(connection);
      await sql`commit`.execute(connection);
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
    return { events: await countEvents(connection), pets: projected.size };
  });
}

async function idsWrittenAfter(db: Kysely<PetStoreDatabase>, afterPosition: number): Promise<number[]> {
  const rows = await db.selectFrom('events').select('stream_id').distinct().where('position', '>', afterPosition).execute();
  return rows.map((row) => Number(row.stream_id.slice('pet-'.length)));
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
export async function verifyPetProjection(db: Kysely<PetStoreDatabase>, onProgress?: Progress): Promise<ProjectionDifference[]> {
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    try {
      const projected = new Map<number, ProjectedPet>();
      const total = await countEvents(connection);
      await replay(connection, projected, 0, onProgress && { report: onProgress, total, done: 0 });
      await sql`drop table if exists temp.pets_verify`.execute(connection);
      await CREATE_LIKE_PETS('pets_verify', true).execute(connection);
      await writeRows(connection, 'pets_verify', [...projected.values()], false);
      const columns = 'id, name, category_id, status, version, created_at, updated_at';
      const expectedOnly = await sql.raw<Record<string, unknown> & { id: number }>(`select ${columns} from temp.pets_verify except select ${columns} from main.pets`).execute(connection);
      const actualOnly = await sql.raw<Record<string, unknown> & { id: number }>(`select ${columns} from main.pets except select ${columns} from temp.pets_verify`).execute(connection);
      await sql`drop table temp.pets_verify`.execute(connection);
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
