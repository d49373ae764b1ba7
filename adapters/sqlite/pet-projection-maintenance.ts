import { CompiledQuery, sql } from 'kysely';
import type { Kysely } from 'kysely';
import { projectPet, upcast } from '../../application/index.ts';
import type { PetRow } from '../../application/index.ts';
import type { PetStoreDatabase } from './schema.ts';
import { petFromRow } from './stored-rows.ts';

export type Progress = (done: number, total: number) => void;

interface ProjectedPet {
  row: PetRow;
  createdAt: string;
  updatedAt: string;
}

interface EventPageRow {
  position: number;
  stream_id: string;
  stream_version: number;
  type: string;
  data: string;
  schema_version: number;
  recorded_at: string;
}

interface TableRow {
  id: number;
  name: string;
  category_id: number;
  status: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

const PAGE = 10_000;
const COLUMNS = 'id, name, category_id, status, version, created_at, updated_at';
// Only what the fold needs; `recorded_at` is the metadata's recordedAt, stored beside it by every append.
const READ_PAGE = `select position, stream_id, stream_version, type, data, json_extract(metadata, '$.schemaVersion') as schema_version, recorded_at
  from events where position > ? order by position limit ${PAGE}`;
// Statements of a few fixed sizes, so that each is prepared once and served from the statement cache.
const ROWS_PER_STATEMENT = [1000, 100, 10, 1];
const IDS_PER_LOOKUP = 1000;

type Executor = Kysely<PetStoreDatabase>;

/**
 * Replays the events after `afterPosition` into `table`, page by page in position order, exactly as the
 * inline projection would have. Memory stays at one page: rows of pets first seen in an earlier page
 * are read back from `table`. `inTransactions`: each page's writes in a short transaction of their own
 * (service writers get the lock between pages). Returns the last position replayed.
 */
async function replayInto(db: Executor, table: string, afterPosition: number, inTransactions: boolean, progress?: { report: Progress; total: number; done: number }): Promise<number> {
  let last = afterPosition;
  for (;;) {
    const { rows } = await db.executeQuery<EventPageRow>(CompiledQuery.raw(READ_PAGE, [last]));
    if (rows.length === 0) return last;
    const projected = await currentRows(db, table, rows);
    for (const row of rows) {
      const event = upcast(row.type, row.schema_version, JSON.parse(row.data) as Record<string, unknown>);
      const id = event.data.id;
      const current = projected.get(id);
      const projectedRow = projectPet(current?.row, [event], row.stream_version);
      projected.set(id, { row: projectedRow, createdAt: current?.createdAt ?? row.recorded_at, updatedAt: row.recorded_at });
    }
    const write = (executor: Executor) => writeRows(executor, table, [...projected.values()]);
    if (inTransactions) await db.transaction().execute(write);
    else await write(db);
    last = rows.at(-1)!.position;
    if (progress) {
      progress.done += rows.length;
      progress.report(progress.done, progress.total);
    }
  }
}

/** The rows already in `table` for the pets this page changes without adding them. */
async function currentRows(db: Executor, table: string, page: readonly EventPageRow[]): Promise<Map<number, ProjectedPet>> {
  const addedHere = new Set<string>();
  const needed = new Set<number>();
  for (const row of page) {
    if (row.stream_version === 1) addedHere.add(row.stream_id);
    else if (!addedHere.has(row.stream_id)) needed.add(Number(row.stream_id.slice('pet-'.length)));
  }
  const found = new Map<number, ProjectedPet>();
  const ids = [...needed];
  for (let index = 0; index < ids.length; index += IDS_PER_LOOKUP) {
    const chunk = ids.slice(index, index + IDS_PER_LOOKUP);
    const { rows } = await db.executeQuery<TableRow>(CompiledQuery.raw(`select ${COLUMNS} from ${table} where id in (${chunk.map(() => '?').join(', ')})`, chunk));
    for (const row of rows) found.set(row.id, { row: { pet: petFromRow(row), version: row.version }, createdAt: row.created_at, updatedAt: row.updated_at });
  }
  return found;
}

/** Writes rows into `table`, replacing any with the same id. */
async function writeRows(db: Executor, table: string, pets: readonly ProjectedPet[]): Promise<void> {
  let index = 0;
  for (const size of ROWS_PER_STATEMENT) {
    const statement = insertStatement(table, size);
    for (; index + size <= pets.length; index += size) {
      const values: unknown[] = [];
      for (let offset = index; offset < index + size; offset++) {
        const { row, createdAt, updatedAt } = pets[offset]!;
        values.push(row.pet.id, row.pet.name, row.pet.categoryId, row.pet.status ?? null, row.version, createdAt, updatedAt);
      }
      await db.executeQuery(CompiledQuery.raw(statement, values));
    }
  }
}

const insertStatements = new Map<string, string>();

function insertStatement(table: string, rows: number): string {
  const key = `${table}:${rows}`;
  let text = insertStatements.get(key);
  if (text === undefined) {
    text = `insert or replace into ${table} (${COLUMNS}) values ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`;
    insertStatements.set(key, text);
  }
  return text;
}

async function countEvents(db: Executor): Promise<number> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function countRows(db: Executor, table: string): Promise<number> {
  const { rows } = await db.executeQuery<{ n: number }>(CompiledQuery.raw(`select count(*) as n from ${table}`));
  return Number(rows[0]!.n);
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
  const total = await countEvents(db);
  const progress = onProgress && { report: onProgress, total, done: 0 };
  await sql`drop table if exists pets_rebuild`.execute(db);
  await CREATE_LIKE_PETS('pets_rebuild').execute(db);
  const replayedUpTo = await replayInto(db, 'pets_rebuild', 0, true, progress);

  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      // Events committed since the replay: the fold continues from the rows it wrote.
      await replayInto(connection, 'pets_rebuild', replayedUpTo, false);
      await sql`drop table pets`.execute(connection);
      await sql`alter table pets_rebuild rename to pets`.execute(connection);
      await sql`create index pets_status_id on pets (status, id)`.execute(connection);
      await sql`commit`.execute(connection);
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
    return { events: await countEvents(connection), pets: await countRows(connection, 'pets') };
  });
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
      const total = await countEvents(connection);
      await sql`drop table if exists temp.pets_verify`.execute(connection);
      await CREATE_LIKE_PETS('pets_verify', true).execute(connection);
      await replayInto(connection, 'temp.pets_verify', 0, false, onProgress && { report: onProgress, total, done: 0 });
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
