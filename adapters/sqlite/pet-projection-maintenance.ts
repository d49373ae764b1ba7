import { CompiledQuery, sql } from 'kysely';
import type { Kysely } from 'kysely';
import { projectPet, upcast } from '../../application/index.ts';
import type { PetRow } from '../../application/index.ts';
import type { PetStoreDatabase } from './schema.ts';
import { petFromRow } from './stored-rows.ts';

export type Progress = (done: number, total: number) => void;

/**
 * A pet as the replay has projected it so far, as the row it will be written as: one small array per
 * pet, since a replay holds every pet (a million nested objects cost the collector more than the fold).
 */
type ProjectedPet = [id: number, name: string, categoryId: number, status: string | null, version: number, createdAt: string, updatedAt: string];

function asPetRow(projected: ProjectedPet): PetRow {
  const [id, name, categoryId, status, version] = projected;
  return { pet: petFromRow({ id, name, category_id: categoryId, status }), version };
}

/** A page of the log as SQLite hands it over: one JSON text of [version, type, data, schema version, recorded at] per event. */
interface EventPage {
  events: string | null;
  count: number;
  last: number | null;
}

type PageEvent = [streamVersion: number, type: string, data: Record<string, unknown>, schemaVersion: number | null, recordedAt: string];

const PAGE = 10_000;
const COLUMNS = 'id, name, category_id, status, version, created_at, updated_at';
// The page comes as one JSON text built by SQLite and parsed once here: a row object per event, with its
// strings, costs more than the rest of the replay. `data` is JSON text already (every append writes
// JSON.stringify's output), the other strings are quoted by SQLite. `recorded_at` is the metadata's
// recordedAt, stored beside it by every append; only the schema version is read from the metadata.
const READ_PAGE = `select '[' || group_concat('[' || stream_version || ',' || json_quote(type) || ',' || data || ','
    || coalesce(json_extract(metadata, '$.schemaVersion'), 'null') || ',' || json_quote(recorded_at) || ']', ',' order by position) || ']' as events,
  count(*) as count, max(position) as last
  from (select position, stream_version, type, data, metadata, recorded_at from events where position > ? order by position limit ${PAGE})`;
// Statements of a few fixed sizes, so that each is prepared once and served from the statement cache.
const ROWS_PER_STATEMENT = [1000, 100, 10, 1];
// Rows per transaction when writing beside a running service: it gets the lock between them.
const ROWS_PER_TRANSACTION = 50_000;

type Executor = Kysely<PetStoreDatabase>;

/**
 * Replays the events after `afterPosition` into `into` (rows keyed by pet id), page by page in position
 * order, exactly as the inline projection would have. Adds the ids it changed to `touched`, if given.
 * Returns the last position replayed.
 */
async function replay(db: Executor, into: Map<number, ProjectedPet>, afterPosition: number, touched?: Set<number>, progress?: { report: Progress; total: number; done: number }): Promise<number> {
  let last = afterPosition;
  for (;;) {
    const page = (await db.executeQuery<EventPage>(CompiledQuery.raw(READ_PAGE, [last]))).rows[0];
    if (!page || page.last === null || page.events === null) return last;
    const events = JSON.parse(page.events) as PageEvent[];
    if (events.length !== page.count) throw new Error(`events after position ${last}: read ${events.length} of ${page.count}`);
    for (const [version, type, data, schemaVersion, recordedAt] of events) {
      const event = upcast(type, schemaVersion ?? 0, data);
      const id = event.data.id;
      const current = into.get(id);
      const { pet, version: projectedVersion } = projectPet(current && asPetRow(current), [event], version);
      into.set(id, [pet.id, pet.name, pet.categoryId, pet.status ?? null, projectedVersion, current?.[5] ?? recordedAt, recordedAt]);
      touched?.add(id);
    }
    last = page.last;
    if (progress) {
      progress.done += events.length;
      progress.report(progress.done, progress.total);
    }
  }
}

/** Writes rows into `table`, replacing any with the same id; with `inTransactions`, in short transactions of their own. */
async function writeRows(db: Executor, table: string, pets: readonly ProjectedPet[], inTransactions: boolean): Promise<void> {
  for (let start = 0; start < pets.length; start += ROWS_PER_TRANSACTION) {
    const slice = pets.slice(start, start + ROWS_PER_TRANSACTION);
    if (inTransactions) await db.transaction().execute((trx) => insertRows(trx, table, slice));
    else await insertRows(db, table, slice);
  }
}

async function insertRows(db: Executor, table: string, pets: readonly ProjectedPet[]): Promise<void> {
  let index = 0;
  for (const size of ROWS_PER_STATEMENT) {
    const statement = insertStatement(table, size);
    for (; index + size <= pets.length; index += size) {
      const values: unknown[] = new Array(size * 7);
      for (let offset = 0; offset < size; offset++) {
        const pet = pets[index + offset]!;
        for (let column = 0; column < 7; column++) values[offset * 7 + column] = pet[column];
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
  const replayedUpTo = await replay(db, projected, 0, undefined, onProgress && { report: onProgress, total, done: 0 });
  await sql`drop table if exists pets_rebuild`.execute(db);
  await CREATE_LIKE_PETS('pets_rebuild').execute(db);
  await writeRows(db, 'pets_rebuild', [...projected.values()], true);

  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      // Events committed since the replay: fold them into the rows, write the rows they changed.
      const touched = new Set<number>();
      await replay(connection, projected, replayedUpTo, touched);
      await writeRows(connection, 'pets_rebuild', [...touched].map((id) => projected.get(id)!), false);
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
      const projected = new Map<number, ProjectedPet>();
      await replay(connection, projected, 0, undefined, onProgress && { report: onProgress, total, done: 0 });
      await sql`drop table if exists temp.pets_verify`.execute(connection);
      await CREATE_LIKE_PETS('pets_verify', true).execute(connection);
      await writeRows(connection, 'temp.pets_verify', [...projected.values()], false);
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
