import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { aggregateOfStream, registeredAggregates } from '../../../application/index.ts';
import type { ReadModelRow } from '../../../application/index.ts';
import type { SqlDialect } from '../sql-dialect.ts';
import { logPages, logPagesAhead, replay, ReplayedReadModels } from './read-model-replay.ts';
import { countEvents, streamsWrittenAfter } from '../sql-event-log.ts';
import { columnsOf, createDeclaredTable, readModelTable } from '../schema.ts';
import type { PetStoreDatabase, TableDeclaration } from '../schema.ts';

/** The database and its dialect: what the maintenance needs of an open store. */
export interface MaintainedStore {
  readonly db: Kysely<PetStoreDatabase>;
  readonly dialect: SqlDialect;
}

export type Progress = (done: number, total: number) => void;

/** The read-model tables of every registered aggregate. */
export function readModelTables(): TableDeclaration[] {
  const names = new Set(registeredAggregates().flatMap((aggregate) => (aggregate.readModel ? [aggregate.readModel.table] : [])));
  return [...names].map(readModelTable);
}

/** Reports each page to `onProgress`, against the number of events in the log when it starts. */
async function progressOf(db: Kysely<PetStoreDatabase>, onProgress: Progress | undefined): Promise<((events: number) => void) | undefined> {
  if (!onProgress) return undefined;
  const n = await countEvents(db);
  const total = Number(n);
  let done = 0;
  return (events) => onProgress((done += events), total);
}

// SQLite allows 32766 parameters in one statement.
const rowsPerInsert = (table: TableDeclaration) => Math.floor(32_000 / columnsOf(table).length);

/**
 * Writes rows into the table `into`, shaped as `table`, which has none of their ids. `inTransactions`:
 * in short transactions of their own, so that service writers get the lock between them (each commit
 * waits for the disk, and writers wait for each transaction).
 */
async function insertRows(
  db: Kysely<PetStoreDatabase>, dialect: SqlDialect, table: TableDeclaration, into: string, rows: readonly ReadModelRow[], inTransactions: boolean,
): Promise<void> {
  const each = rowsPerInsert(table);
  const insert = async (executor: Kysely<PetStoreDatabase>, from: number, to: number) => {
    for (let start = from; start < to; start += each) {
      await dialect.insertRows(executor, table, rows.slice(start, Math.min(to, start + each)), into);
    }
  };
  if (!inTransactions) return insert(db, 0, rows.length);
  for (let start = 0; start < rows.length; start += 4 * each) {
    const end = Math.min(rows.length, start + 4 * each);
    await db.transaction().execute((trx) => insert(trx, start, end));
  }
}

/**
 * Rebuilds every read model from the whole log and swaps each in atomically. The bulk of the replay
 * runs without a lock; then, in a transaction during which no append can commit, it applies the events
 * that arrived meanwhile and swaps the results in (the tables on SQLite, their rows on PostgreSQL).
 * Writers wait for that last step only; readers see the old read model or the new one, never a half.
 * Replaying by position skips nothing: on every dialect, positions are handed out in commit order.
 */
export async function rebuildReadModels({ db, dialect }: MaintainedStore, onProgress?: Progress): Promise<{ events: number; rows: number }> {
  const tables = readModelTables();
  const replayed = new ReplayedReadModels();
  const done = await replay(await logPagesAhead(db, dialect, 0), replayed, 0, await progressOf(db, onProgress));

  for (const table of tables) {
    const scratch = `${table.name}_rebuild`;
    await sql.raw(`drop table if exists ${scratch}`).execute(db);
    await createDeclaredTable(db, table, scratch, { temporary: false });
    await insertRows(db, dialect, table, scratch, replayed.table(table.name).list(), true);
  }

  return db.connection().execute(async (connection) => {
    await dialect.beginExclusive(connection, tables.map((table) => table.name));
    try {
      // Events committed since the replay: their streams' rows go, and come back with those events applied.
      const written = await rowsWrittenAfter(connection, done.last);
      const tail = new ReplayedReadModels();
      for (const [name, ids] of written) {
        for (const id of ids) {
          const known = replayed.table(name).get(id);
          if (known) tail.table(name).set({ ...known });
        }
      }
      const { events } = await replay(logPages(connection, dialect, done.last), tail, done.last);
      for (const table of tables) {
        const scratch = `${table.name}_rebuild`;
        const ids = written.get(table.name) ?? [];
        for (let start = 0; start < ids.length; start += IDS_PER_DELETE) {
          await connection.deleteFrom(scratch as 'pets').where('id', 'in', ids.slice(start, start + IDS_PER_DELETE)).execute();
        }
        await insertRows(connection, dialect, table, scratch, tail.table(table.name).list(), false);
        await dialect.swapIn(connection, table, scratch);
      }
      await sql`commit`.execute(connection);
      for (const [name, rows] of tail.tables()) for (const row of rows.list()) replayed.table(name).set(row);
      return { events: done.events + events, rows: replayed.size };
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}

// Well under SQLite's 32766 parameters a statement.
const IDS_PER_DELETE = 10_000;

/** The read-model rows of the streams written after `afterPosition`: ids by table. */
async function rowsWrittenAfter(db: Kysely<PetStoreDatabase>, afterPosition: number): Promise<Map<string, number[]>> {
  const rows = new Map<string, number[]>();
  for (const streamId of await streamsWrittenAfter(db, afterPosition)) {
    const found = aggregateOfStream(streamId);
    const table = found?.aggregate.readModel?.table;
    if (table === undefined) continue;
    const ids = rows.get(table);
    if (ids) ids.push(found!.id);
    else rows.set(table, [found!.id]);
  }
  return rows;
}

export interface ProjectionDifference {
  readonly table: string;
  readonly id: number;
  readonly kind: 'missing' | 'unexpected' | 'different';
  /** The row as the log says it should be. */
  readonly expected?: Record<string, unknown>;
  /** The row as the live read model has it. */
  readonly actual?: Record<string, unknown>;
}

/**
 * Rebuilds every read model from the log into scratch (temporary) tables and compares them row by row
 * with the live ones, all inside one read transaction so concurrent writers cannot cause false alarms.
 */
export async function verifyReadModels({ db, dialect }: MaintainedStore, onProgress?: Progress): Promise<ProjectionDifference[]> {
  return db.connection().execute(async (connection) => {
    await dialect.beginSnapshot(connection);
    try {
      const replayed = new ReplayedReadModels();
      await replay(logPages(connection, dialect, 0), replayed, 0, await progressOf(connection, onProgress));
      const differences: ProjectionDifference[] = [];
      for (const table of readModelTables()) {
        const scratch = `${table.name}_verify`;
        // Unqualified names: the temporary table shadows nothing, and the live one keeps its name.
        await createDeclaredTable(connection, table, scratch, { temporary: true });
        await insertRows(connection, dialect, table, scratch, replayed.table(table.name).list(), false);
        const columns = columnsOf(table).join(', ');
        const expectedOnly = await sql.raw<Record<string, unknown> & { id: number }>(`select ${columns} from ${scratch} except select ${columns} from ${table.name}`).execute(connection);
        const actualOnly = await sql.raw<Record<string, unknown> & { id: number }>(`select ${columns} from ${table.name} except select ${columns} from ${scratch}`).execute(connection);
        const byId = new Map<number, { expected?: Record<string, unknown>; actual?: Record<string, unknown> }>();
        for (const row of expectedOnly.rows) byId.set(row.id, { ...byId.get(row.id), expected: row });
        for (const row of actualOnly.rows) byId.set(row.id, { ...byId.get(row.id), actual: row });
        differences.push(...[...byId.entries()]
          .sort(([a], [b]) => a - b)
          .map(([id, { expected, actual }]): ProjectionDifference => {
            const kind = expected && actual ? 'different' : expected ? 'missing' : 'unexpected';
            return { table: table.name, id, kind, ...(expected ? { expected } : {}), ...(actual ? { actual } : {}) };
          }));
      }
      return differences;
    } finally {
      await sql`rollback`.execute(connection);
    }
  });
}
