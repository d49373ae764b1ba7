import type { SqliteDatabase } from 'kysely';
import { appendAll, BatchRows, withIds } from '../write/batch-rows.ts';
import type { BatchReads, BatchReadsWanted, BatchWrites, PendingWrite } from '../write/batch-rows.ts';
import { columnsOf, EVENTS, IDEMPOTENCY_KEYS, readModelTable, sqliteInsert } from '../schema.ts';
import type { ReadRow, TableDeclaration } from '../schema.ts';
import type { ReadModelRow } from '../../../application/index.ts';
import { LOG_END, SQLITE_STREAM_VERSIONS } from '../sql-event-log.ts';
import type { CommitMark, OwnCommit, OwnCommitMarks } from './sqlite-commits.ts';
import { sqliteFault, sqliteSqlDialect } from './sqlite-sql-dialect.ts';
import type { BatchOutcome } from '../write/batch-rows.ts';

/** A batch's appends and writes, for `commit`: run in the transaction `begin` opened, then COMMIT. */
export interface BatchToCommit {
  /** The appends and creations, each creation built from its id (`ids`, see `withIds`) under the lock. */
  readonly writes: readonly PendingWrite[];
  /** The ids drawn for the creations (`drawIds`) by sequence: the first, and how many; none when the batch has none. */
  readonly drawn?: ReadonlyMap<string, { readonly first: number; readonly count: number }> | undefined;
  /** Touches the store_health row: a write check (see SqliteWrites.checkWrites). */
  readonly writeHealthRow: boolean;
  readonly now: string;
  /**
   * Reads the creations' new streams too, as every other stream: for a batch run again after one of them
   * was found taken (`NewStreamTaken`). Otherwise they are taken to be empty, their ids just drawn.
   */
  readonly readNewStreams?: boolean;
}

/**
 * A creation's new stream or row was there already: only a write around the sequence can have put it
 * there. The batch has rolled back, having answered nobody; run again with `readNewStreams`, its plan
 * refuses that creation alone.
 */
export class NewStreamTaken extends Error {
  constructor(cause: unknown) {
    super('a row of a creation\'s new stream was there already', { cause });
    this.name = 'NewStreamTaken';
  }
}

/** A committed batch: each append's answer (its result, or the plan's refusal), to give once the store has seen the commit. */
export interface BatchCommitted {
  readonly answers: readonly (() => void)[];
  /** When the appends began to run and when COMMIT returned (`performance.now()` milliseconds). */
  readonly began: number;
  readonly committed: number;
}

function firstOf(drawn: BatchToCommit['drawn'], sequence: string): number {
  const block = drawn?.get(sequence);
  if (!block) throw new Error(`no ${sequence} id was drawn for the batch`);
  return block.first;
}

/** Replaces an expired record with the same scope and key (a live one was refused by the plan). */
const REPLACING_EXPIRED = ' on conflict (scope, idempotency_key) do update set fingerprint = excluded.fingerprint, answer = excluded.answer, expires_at = excluded.expires_at';

/** A connection of the writer's own, with the file's commit mark as seen through it. */
export interface WriterConnection {
  /** Prepared through a statement cache at each use. */
  readonly database: SqliteDatabase;
  readonly mark: CommitMark;
  close(): void;
}

export interface BatchWriterOptions {
  /** Opens the writer's connection: at the first batch, and again when a batch asks for it (after the file was found unwritable). */
  readonly connect: () => Promise<WriterConnection>;
  /**
   * Told of each commit as soon as COMMIT returned, before anything else runs on the event loop: the
   * file's marks around it, the log's last position and the pets it changed (see `SqliteCommits.committed`).
   */
  readonly committed: (marks: OwnCommitMarks, commit: OwnCommit) => void;
  /** For tests: awaited just before each COMMIT, to hold a batch there. */
  readonly beforeCommit?: (() => Promise<void>) | undefined;
  /** For tests: awaited once a batch has committed and been reported, just before its appends are answered. */
  readonly beforeAnswer?: (() => Promise<void>) | undefined;
}

/** SQLite's batch transactions on the writer's own connection, one at a time. */
export interface BatchWriter {
  /**
   * Takes the write lock. The connection waits for no lock: SQLite's SQLITE_BUSY is thrown at once
   * while another connection holds it.
   */
  begin(): Promise<void>;
  /** Draws `count` new ids of `sequence` in the transaction `begin` opened; returns the first. On a failure it has rolled back, and throws. */
  drawIds(sequence: string, count: number): number;
  /** Opens the connection afresh at the next `begin` (after the file was found unwritable). */
  reopen(): void;
  /**
   * Runs the batch's appends in the transaction `begin` opened, then COMMIT; on a failure it has rolled
   * back, and throws (`NewStreamTaken` when a creation's new stream was not new).
   */
  commit(batch: BatchToCommit): Promise<BatchCommitted>;
  /** Ends the transaction `begin` opened without committing it. */
  rollback(): void;
  /** The writer's connection, for statements inside a transaction `begin` opened, or a per-connection setting. */
  connection(): Promise<SqliteDatabase>;
  close(): void;
}

/**
 * Runs the store's batch transactions on one connection of its own. Every row of an append is
 * `executeAppend`'s (through `appendAll`), as prepared statements here; faults are thrown
 * untranslated, for the store to translate once.
 */
export function createBatchWriter(options: BatchWriterOptions): BatchWriter {
  let connection: WriterConnection | undefined;
  let before: Uint8Array = new Uint8Array();
  let versionAtBegin = 0;
  // Prepared at each use through the connection's statement cache: a reopened connection has statements of its own.
  const prepare = (text: string) => () => connection!.database.prepare(text);
  const begin = prepare('begin immediate');
  const commit = prepare('commit');
  const rollback = prepare('rollback');
  const dataVersion = prepare('pragma data_version');
  const readLastId = prepare('select value from sequences where name = ?');
  // A sequence no id was drawn from yet has no row: the first draw writes it.
  const writeLastId = prepare('insert into sequences (name, value) values (?, ?) on conflict (name) do update set value = excluded.value');
  const logEnd = prepare(LOG_END.sqlite);
  const streamVersions = prepare(SQLITE_STREAM_VERSIONS);
  const liveRecords = prepare('select scope, idempotency_key from idempotency_keys where expires_at > ? and (scope, idempotency_key) in (select value ->> 0, value ->> 1 from json_each(?))');
  const writeHealthRow = prepare('insert into store_health (id, checked_at) values (1, ?) on conflict (id) do update set checked_at = excluded.checked_at');
  // One row a statement: SQLite runs a multi-row VALUES as a co-routine, slower a row than a statement
  // run again (a batch of 62 creations: 11.4 against 7.8 µs a creation for its pet and event rows).
  const insertEvent = prepare(sqliteInsert(EVENTS, 1));
  const remember = prepare(sqliteInsert(IDEMPOTENCY_KEYS, 1) + REPLACING_EXPIRED);
  const readDataVersion = () => (dataVersion().all([])[0] as { data_version: number }).data_version;

  /** Each read-model table's statements, prepared from its declaration at first use. */
  const tableStatements = new Map<string, ReturnType<typeof readModelStatements>>();
  function readModelStatements(name: string) {
    const table = readModelTable(name);
    // Every column but the key, then the key.
    const updated = [...columnsOf(table).filter((column) => column !== 'id'), 'id'];
    return {
      table,
      updated,
      select: prepare(`select ${columnsOf(table).join(', ')} from ${name} where id in (select value from json_each(?))`),
      insert: prepare(sqliteInsert(table, 1)),
      update: prepare(`update ${name} set ${updated.slice(0, -1).map((column) => `${column} = ?`).join(', ')} where id = ?`),
    };
  }
  const statementsOf = (name: string) => {
    let statements = tableStatements.get(name);
    if (!statements) tableStatements.set(name, (statements = readModelStatements(name)));
    return statements;
  };

  /** What the batch's appends read, in a statement a kind at most, under the write lock. */
  function readBatch({ streams, rows: wanted, scopes, keys }: BatchReadsWanted, now: string): BatchReads {
    const rows: Record<string, ReadModelRow[]> = {};
    for (const [table, ids] of wanted) rows[table] = statementsOf(table).select().all([JSON.stringify(ids)]) as ReadModelRow[];
    return {
      versions: streams.length === 0 ? [] : (streamVersions().all([JSON.stringify(streams)]) as { stream_id: string; version: number }[]).map((row) => [row.stream_id, row.version] as const),
      rows,
      remembered: keys.length === 0 ? [] : (liveRecords().all([now, JSON.stringify(scopes.map((scope, index) => [scope, keys[index]]))]) as { scope: string; idempotency_key: string }[])
        .map((row) => [row.scope, row.idempotency_key] as const),
    };
  }

  /** Everything the batch's appends wrote, a statement a row, each prepared once. */
  function writeBatch({ created, changed, events, remembered }: BatchWrites): void {
    for (const [name, rows] of created) {
      const { insert, table } = statementsOf(name);
      insertEach(insert(), table, rows);
    }
    for (const [name, rows] of changed) {
      const { update, updated } = statementsOf(name);
      runEach(update(), updated, rows);
    }
    insertEach(insertEvent(), EVENTS, events);
    insertEach(remember(), IDEMPOTENCY_KEYS, remembered);
  }

  function insertEach<T extends TableDeclaration>(statement: ReturnType<SqliteDatabase['prepare']>, table: T, rows: readonly (ReadRow<T> | ReadModelRow)[]): void {
    runEach(statement, columnsOf(table), rows as readonly Record<string, unknown>[]);
  }

  /** Runs the statement for each row with its `columns` as parameters: one array for all rows, since `run` binds them before it returns. */
  function runEach(statement: ReturnType<SqliteDatabase['prepare']>, columns: readonly string[], rows: readonly Record<string, unknown>[]): void {
    const values: unknown[] = new Array(columns.length);
    for (const row of rows) {
      for (let index = 0; index < columns.length; index++) values[index] = row[columns[index]!];
      statement.run(values);
    }
  }

  /** A row's unique key refused the write: a stream's event or a read-model row is there already. */
  const isTakenRow = (error: unknown) => sqliteSqlDialect.isUniqueViolation(error, 'events_stream_version_unique')
    || [...tableStatements.keys()].some((table) => sqliteSqlDialect.isUniqueViolation(error, `${table}_pkey`));

  /** A fault of SQLite fails the batch; the plan's refusals are rows it never wrote. */
  const failsBatch = (error: unknown) => sqliteFault(error) !== undefined;

  /** The file's commit mark now, or an empty one (unknown) when it cannot be read. */
  function readMark(mark: CommitMark): Uint8Array {
    try {
      return Uint8Array.from(mark.read());
    } catch {
      return new Uint8Array();
    }
  }

  /**
   * Ends a failed batch or write. A connection whose ROLLBACK failed (an I/O error) may still hold its
   * transaction: it is closed, which rolls back, and the next request opens another, rather than
   * every later BEGIN failing on it. A connection that rolled back is kept, with its settings.
   */
  function rollBack(): void {
    try {
      rollback().run([]);
      return;
    } catch (rollbackError) {
      // SQLite may have rolled back already (e.g. after an I/O error), or nothing was begun.
      if (/no transaction is active/.test(String((rollbackError as { message?: unknown } | null)?.message))) return;
    }
    try {
      closeConnection();
    } catch {
      // Closing is best effort: the connection is not used again either way.
    }
  }

  /** Closes the connection; forgotten first, so that the next request opens another even if closing throws. */
  function closeConnection(): void {
    const closing = connection;
    connection = undefined;
    closing?.close();
  }

  let reopenWanted = false;

  async function connected(): Promise<WriterConnection> {
    if (reopenWanted || !connection) {
      reopenWanted = false;
      closeConnection();
      connection = await options.connect();
    }
    return connection;
  }

  async function beginBatch(): Promise<void> {
    const { mark } = await connected();
    begin().run([]);
    // Under the write lock no other connection commits: this is the mark the batch's commit follows.
    versionAtBegin = readDataVersion();
    before = readMark(mark);
  }

  function drawIds(sequence: string, count: number): number {
    const name = `${sequence}_id`;
    const last = (readLastId().all([name])[0] as { value: number } | undefined)?.value ?? 0;
    // Taken whatever becomes of the appends: an id whose append is refused is never handed out again.
    writeLastId().run([name, last + count]);
    return last + 1;
  }

  /**
   * The batch's writes: what they read, the creations built from their ids and what they read, the reads
   * their appends still need (all but the new streams', when `fresh`), the plan in memory, their writes.
   */
  function appendAndWrite(writes: readonly PendingWrite[], drawn: BatchToCommit['drawn'], now: string, fresh: boolean): BatchOutcome {
    // Read when the batch's first event is given its position: a batch that appends nothing needs no log end.
    let end: number | undefined;
    const rows = new BatchRows((index) => (end ??= (logEnd().all([])[0] as { last: number }).last) + 1 + index);
    const read = rows.toRead(writes);
    if (read) rows.load(readBatch(read, now));
    const freshStreams = fresh ? new Set<string>() : undefined;
    const built = withIds(writes, (sequence, index) => firstOf(drawn, sequence) + index, rows, freshStreams);
    const { appends, used } = built;
    // The ids of creations their decision refused go back to the sequence, in the transaction that drew them.
    for (const [sequence, { first, count }] of drawn ?? []) {
      const taken = used.get(sequence) ?? 0;
      if (taken < count) writeLastId().run([`${sequence}_id`, first + taken - 1]);
    }
    const wanted = rows.toRead(appends, freshStreams);
    if (wanted) rows.load(readBatch(wanted, now));
    const outcome = appendAll({ rows, failsBatch }, built, new Date(now));
    writeBatch(rows.writes());
    return outcome;
  }

  async function commitBatch({ writes, drawn, writeHealthRow: healthRow, now, readNewStreams = false }: BatchToCommit): Promise<BatchCommitted> {
    const began = performance.now();
    let outcome: BatchOutcome;
    // A creation's stream is new (its id was just drawn under the lock), so it is not read, and no savepoint
    // guards the batch (one costs a copy of every page the batch changes). A write around the sequence is
    // what a taken row means: then the whole batch runs again, its new streams read.
    try {
      outcome = appendAndWrite(writes, drawn, now, !readNewStreams && writes.some((write) => 'build' in write));
    } catch (error) {
      throw !readNewStreams && isTakenRow(error) ? new NewStreamTaken(error) : error;
    }
    if (healthRow) writeHealthRow().run([now]);
    await options.beforeCommit?.();
    commit().run([]);
    const committed = performance.now();
    // Committed: nothing from here on fails the batch. An unreadable mark is an unknown one, and the
    // store then takes the commit for "anything may have changed".
    let after = readMark(connection!.mark);
    try {
      // Read after the mark: had another connection committed since ours, data_version would have moved.
      if (readDataVersion() !== versionAtBegin) after = new Uint8Array();
    } catch {
      after = new Uint8Array();
    }
    options.committed({ before, after }, { last: outcome.last, changes: outcome.changes, types: outcome.types });
    await options.beforeAnswer?.();
    return { answers: outcome.answers, began, committed };
  }

  /** A failed step of a batch rolls it back and throws. */
  async function orRollBack<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      return rollBackAndThrow(error);
    }
  }

  function rollBackAndThrow(error: unknown): never {
    if (connection) rollBack();
    throw error;
  }

  return {
    begin: () => orRollBack(beginBatch),
    drawIds: (sequence, count) => {
      try {
        return drawIds(sequence, count);
      } catch (error) {
        return rollBackAndThrow(error);
      }
    },
    reopen: () => void (reopenWanted = true),
    commit: (batch) => orRollBack(() => commitBatch(batch)),
    rollback: rollBack,
    connection: async () => (await connected()).database,
    close: closeConnection,
  };
}
