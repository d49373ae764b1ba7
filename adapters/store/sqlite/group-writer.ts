import type { SqliteDatabase } from 'kysely';
import { appendAll, GroupRows } from '../group-rows.ts';
import type { PendingAppend, GroupReads, GroupReadsWanted, GroupWrites } from '../group-rows.ts';
import type { PetRow, TableDeclaration } from '../schema.ts';
import { columnsOf, EVENTS, IDEMPOTENCY_KEYS, PETS, rowValues, sqliteInsert } from '../schema.ts';
import type { CommitMark, OwnCommit, OwnCommitMarks } from './sqlite-commits.ts';
import { sqliteFault } from './sqlite-sql-dialect.ts';

/** The write lock taken, and the new pet ids drawn from `first` on. */
export interface Begun {
  readonly first: number;
}

/** A group's appends and writes, for `commit`: run in the transaction `begin` opened, then COMMIT. */
export interface GroupToCommit {
  readonly appends: readonly PendingAppend[];
  /** Touches the store_health row: a write check (see SqliteWrites.checkWrites). */
  readonly writeHealthRow: boolean;
  readonly now: string;
}

/** A committed group: each append's answer (its result, or the plan's refusal), to give once the store has seen the commit. */
export interface GroupCommitted {
  readonly answers: readonly (() => void)[];
  /** When the appends began to run and when COMMIT returned (`performance.now()` milliseconds). */
  readonly began: number;
  readonly committed: number;
}

/** The text of a statement writing `count` rows. */
type RowsStatement = (count: number) => string;

const MOST_ROWS_A_STATEMENT = 64;

/** The insert of `count` rows into `table`, its text built once for each count. */
function rowsStatement(table: TableDeclaration, tail = ''): RowsStatement {
  const texts = new Map<number, string>();
  return (count) => {
    let text = texts.get(count);
    if (text === undefined) {
      text = sqliteInsert(table, count) + tail;
      texts.set(count, text);
    }
    return text;
  };
}

const INSERT_PETS = rowsStatement(PETS);
const INSERT_EVENTS = rowsStatement(EVENTS);
const REMEMBER = rowsStatement(IDEMPOTENCY_KEYS,
  ' on conflict (scope, idempotency_key) do update set fingerprint = excluded.fingerprint, pet = excluded.pet, expires_at = excluded.expires_at');

/** A connection of the writer's own, with the file's commit mark as seen through it. */
export interface WriterConnection {
  /** Prepared through a statement cache at each use. */
  readonly database: SqliteDatabase;
  readonly mark: CommitMark;
  close(): void;
}

export interface GroupWriterOptions {
  /** Opens the writer's connection: at the first group, and again when a group asks for it (after the file was found unwritable). */
  readonly connect: () => Promise<WriterConnection>;
  /**
   * Told of each commit as soon as COMMIT returned, before anything else runs on the event loop: the
   * file's marks around it, the log's last position and the pets it changed (see `SqliteCommits.committed`).
   */
  readonly committed: (marks: OwnCommitMarks, commit: OwnCommit) => void;
  /** For tests: awaited just before each COMMIT, to hold a group there. */
  readonly beforeCommit?: (() => Promise<void>) | undefined;
  /** For tests: awaited once a group has committed and been reported, just before its appends are answered. */
  readonly beforeAnswer?: (() => Promise<void>) | undefined;
}

/** SQLite's group transactions on the writer's own connection, one at a time. */
export interface GroupWriter {
  /**
   * Takes the write lock and draws `ids` new pet ids. The connection waits for no lock: SQLite's
   * SQLITE_BUSY is thrown at once while another connection holds it.
   */
  begin(ids: number): Promise<Begun>;
  /** Opens the connection afresh at the next `begin` (after the file was found unwritable). */
  reopen(): void;
  /** Runs the group's appends in the transaction `begin` opened, then COMMIT; on a failure it has rolled back, and throws. */
  commit(group: GroupToCommit): Promise<GroupCommitted>;
  /** Ends the transaction `begin` opened without committing it. */
  rollback(): void;
  /** The writer's connection, for statements inside a transaction `begin` opened, or a per-connection setting. */
  connection(): Promise<SqliteDatabase>;
  close(): void;
}

/**
 * Runs the store's group transactions on one connection of its own. Every row of an append is
 * `executeAppend`'s (through `appendAll`), as prepared statements here; faults are thrown
 * untranslated, for the store to translate once.
 */
export function createGroupWriter(options: GroupWriterOptions): GroupWriter {
  let connection: WriterConnection | undefined;
  let before: Uint8Array = new Uint8Array();
  let versionAtBegin = 0;
  // Prepared at each use through the connection's statement cache: a reopened connection has statements of its own.
  const prepare = (text: string) => () => connection!.database.prepare(text);
  const begin = prepare('begin immediate');
  const commit = prepare('commit');
  const rollback = prepare('rollback');
  const dataVersion = prepare('pragma data_version');
  const readLastId = prepare("select value from sequences where name = 'pet_id'");
  const writeLastId = prepare("update sequences set value = ? where name = 'pet_id'");
  // The log's end: AUTOINCREMENT's high-water mark, so a position is never given twice, even after its row is gone.
  const logEnd = prepare("select max(coalesce((select seq from sqlite_sequence where name = 'events'), 0), coalesce((select max(position) from events), 0)) as last");
  const streamVersions = prepare('select stream_id, max(stream_version) as version from events where stream_id in (select value from json_each(?)) group by stream_id');
  const petRows = prepare(`select ${columnsOf(PETS).join(', ')} from pets where id in (select value from json_each(?))`);
  const liveRecords = prepare('select scope, idempotency_key from idempotency_keys where expires_at > ? and (scope, idempotency_key) in (select value ->> 0, value ->> 1 from json_each(?))');
  // Every column but the key, then the key.
  const updatedColumns = [...columnsOf(PETS).filter((column) => column !== 'id'), 'id' as const];
  const updatePet = prepare(`update pets set ${updatedColumns.slice(0, -1).map((column) => `${column} = ?`).join(', ')} where id = ?`);
  const writeHealthRow = prepare('insert into store_health (id, checked_at) values (1, ?) on conflict (id) do update set checked_at = excluded.checked_at');
  const readDataVersion = () => (dataVersion().all([])[0] as { data_version: number }).data_version;

  /** What the group's appends read, in three statements at most, under the write lock. */
  function readGroup({ streams, petIds, scopes, keys }: GroupReadsWanted, now: string): GroupReads {
    return {
      versions: streams.length === 0 ? [] : (streamVersions().all([JSON.stringify(streams)]) as { stream_id: string; version: number }[]).map((row) => [row.stream_id, row.version] as const),
      pets: petIds.length === 0 ? [] : petRows().all([JSON.stringify(petIds)]) as PetRow[],
      remembered: keys.length === 0 ? [] : (liveRecords().all([now, JSON.stringify(scopes.map((scope, index) => [scope, keys[index]]))]) as { scope: string; idempotency_key: string }[])
        .map((row) => [row.scope, row.idempotency_key] as const),
    };
  }

  /** Everything the group's appends wrote, a few rows a statement. */
  function writeGroup({ createdPets, changedPets, events, remembered }: GroupWrites): void {
    insertRows(INSERT_PETS, columnsOf(PETS).length, rowValues(PETS, createdPets));
    for (const row of changedPets) updatePet().run(updatedColumns.map((column) => row[column]));
    insertRows(INSERT_EVENTS, columnsOf(EVENTS).length, rowValues(EVENTS, events));
    // Nothing live holds these keys (read under the lock): a record in the way has expired, and is replaced.
    insertRows(REMEMBER, columnsOf(IDEMPOTENCY_KEYS).length, rowValues(IDEMPOTENCY_KEYS, remembered));
  }

  /** Inserts rows of `width` values (given row after row) in statements of 64, 32, … 1 rows: few statements a group, few texts to prepare. */
  function insertRows(statement: RowsStatement, width: number, values: readonly unknown[]): void {
    const rows = values.length / width;
    let at = 0;
    for (let size = MOST_ROWS_A_STATEMENT; size >= 1; size >>= 1) {
      for (; rows - at >= size; at += size) connection!.database.prepare(statement(size)).run(values.slice(at * width, (at + size) * width));
    }
  }

  /** A fault of SQLite fails the group; the plan's refusals are rows it never wrote. */
  const failsGroup = (error: unknown) => sqliteFault(error) !== undefined;

  /** The file's commit mark now, or an empty one (unknown) when it cannot be read. */
  function readMark(mark: CommitMark): Uint8Array {
    try {
      return Uint8Array.from(mark.read());
    } catch {
      return new Uint8Array();
    }
  }

  /**
   * Ends a failed group or write. A connection whose ROLLBACK failed (an I/O error) may still hold its
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

  async function beginGroup(ids: number): Promise<Begun> {
    const { mark } = await connected();
    begin().run([]);
    // Under the write lock no other connection commits: this is the mark the group's commit follows.
    versionAtBegin = readDataVersion();
    before = readMark(mark);
    if (ids === 0) return { first: 0 };
    const last = (readLastId().all([])[0] as { value: number }).value;
    // Taken whatever becomes of the appends: an id whose append is refused is never handed out again.
    writeLastId().run([last + ids]);
    return { first: last + 1 };
  }

  async function commitGroup({ appends, writeHealthRow: healthRow, now }: GroupToCommit): Promise<GroupCommitted> {
    const began = performance.now();
    // Read when the group's first event is given its position: a group that appends nothing needs no log end.
    let end: number | undefined;
    const rows = new GroupRows((index) => (end ??= (logEnd().all([])[0] as { last: number }).last) + 1 + index);
    // Every stream is read, new pets' too: a stream may have been written around the sequence.
    const wanted = rows.toRead(appends);
    if (wanted) rows.load(readGroup(wanted, now));
    const outcome = await appendAll({ rows, failsGroup }, appends, new Date(now));
    writeGroup(rows.writes());
    if (healthRow) writeHealthRow().run([now]);
    await options.beforeCommit?.();
    commit().run([]);
    const committed = performance.now();
    // Committed: nothing from here on fails the group. An unreadable mark is an unknown one, and the
    // store then takes the commit for "anything may have changed".
    let after = readMark(connection!.mark);
    try {
      // Read after the mark: had another connection committed since ours, data_version would have moved.
      if (readDataVersion() !== versionAtBegin) after = new Uint8Array();
    } catch {
      after = new Uint8Array();
    }
    options.committed({ before, after }, { last: outcome.last, changes: outcome.changes });
    await options.beforeAnswer?.();
    return { answers: outcome.answers, began, committed };
  }

  /** A failed step of a group rolls it back and throws. */
  async function orRollBack<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (connection) rollBack();
      throw error;
    }
  }

  return {
    begin: (ids) => orRollBack(() => beginGroup(ids)),
    reopen: () => void (reopenWanted = true),
    commit: (group) => orRollBack(() => commitGroup(group)),
    rollback: rollBack,
    connection: async () => (await connected()).database,
    close: closeConnection,
  };
}
