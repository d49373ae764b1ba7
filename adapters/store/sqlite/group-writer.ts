import type { SqliteDatabase } from 'kysely';
import { IdempotencyKeyTaken, StoreUnavailable, StreamVersionConflict } from '../../../application/index.ts';
import type { AppendResult } from '../../../application/index.ts';
import { appendAll } from '../append-group.ts';
import type { PendingAppend } from '../append-group.ts';
import type { AppendRequest } from '../append-plan.ts';
import { GroupRows } from '../group-rows.ts';
import type { GroupReads, GroupReadsWanted, GroupWrites } from '../group-rows.ts';
import type { PetChange } from '../catalog-changes.ts';
import type { PetRow } from '../pet-rows.ts';
import { columnsOf, EVENTS, IDEMPOTENCY_KEYS, PETS, rowValues, sqliteInsert } from '../schema.ts';
import type { TableDeclaration } from '../schema.ts';
import type { CommitMark, OwnCommitMarks } from './sqlite-catalog-changes.ts';
import { sqliteFault } from './sqlite-sql-dialect.ts';

/**
 * The messages between the store and its group writer (a worker thread, see group-writer-thread.ts):
 * only group-writer-channel.ts sends them, behind the typed calls of `GroupWriterChannel`.
 * A group is `begin` (takes the write lock, draws `ids` new pet ids) then `commit` (the appends, the
 * health row, COMMIT); without ids, `begin` carries the `commit` and the group is one round trip.
 */
export type GroupRequest =
  | { readonly kind: 'begin'; readonly ids: number; readonly reopen: boolean; readonly commit?: CommitRequest }
  | CommitRequest
  /** A setting that holds per connection (`max_page_count`), given outside any group; answered `done`. */
  | { readonly kind: 'pragma'; readonly pragma: string }
  /**
   * A statement of a write beside the groups (webhook delivery state), between a `begin` without ids and
   * a `commit` without appends; answered `rows`, or `failed` leaving the transaction to the asker.
   */
  | { readonly kind: 'statement'; readonly sql: string; readonly parameters: readonly unknown[] }
  /** Ends a write beside the groups without committing it; answered `done`. */
  | { readonly kind: 'rollback' }
  /** Closes the writer's connection (the store is closing); answered `done`. */
  | { readonly kind: 'close' };

export interface CommitRequest {
  readonly kind: 'commit';
  readonly appends: readonly AppendRequest[];
  /** Touches the store_health row: a write check (see SqliteWrites.checkWrites). */
  readonly writeHealthRow: boolean;
  /** The store's clock, read on the main thread. */
  readonly now: string;
}

export type GroupReply =
  /** The write lock stayed taken for the whole busy timeout: nothing was written. */
  | { readonly kind: 'busy' }
  /** The group failed and was rolled back. */
  | { readonly kind: 'failed'; readonly error: SerializedError }
  /** The write lock is held and the ids from `first` on are drawn; `commit` is awaited. */
  | { readonly kind: 'begun'; readonly first: number }
  | { readonly kind: 'done' }
  | { readonly kind: 'rows'; readonly rows: readonly unknown[]; readonly changes?: number; readonly lastInsertRowid?: number }
  | CommittedReply;

export interface CommittedReply extends OwnCommitMarks {
  readonly kind: 'committed';
  /** Each append's outcome, in the order asked. */
  readonly outcomes: readonly ({ readonly result: AppendResult } | { readonly error: SerializedError })[];
  readonly changes: readonly PetChange[];
  /** When the appends began to run and when COMMIT returned, as `performance.timeOrigin + performance.now()`. */
  readonly began: number;
  readonly committed: number;
}

/** An error as it crosses between threads: the application's errors of an append by their fields, others by message and code. */
export type SerializedError =
  | { readonly conflict: { readonly streamId: string; readonly expected: number | 'no_stream'; readonly actual: number } }
  | { readonly keyTaken: { readonly scope: string; readonly key: string } }
  /** The writer could not answer at all (its thread ended): a fault of the machine, worth a retry. */
  | { readonly unavailable: string }
  | { readonly message: string; readonly code?: string };

export function serializeError(error: unknown): SerializedError {
  if (error instanceof StreamVersionConflict) return { conflict: { streamId: error.streamId, expected: error.expected, actual: error.actual } };
  if (error instanceof IdempotencyKeyTaken) return { keyTaken: { scope: error.scope, key: error.key } };
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  return { message: String(message ?? error), ...(typeof code === 'string' ? { code } : {}) };
}

/** The error again, as the driver or the application raised it (not yet translated). */
export function deserializeError(error: SerializedError): Error {
  if ('conflict' in error) return new StreamVersionConflict(error.conflict.streamId, error.conflict.expected, error.conflict.actual);
  if ('keyTaken' in error) return new IdempotencyKeyTaken(error.keyTaken.scope, error.keyTaken.key);
  if ('unavailable' in error) return new StoreUnavailable(error.unavailable, { retryAfterSeconds: 1 });
  return Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code });
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
  /** Told the marks of each commit as soon as it returned (see `PublishedMarks`). */
  readonly published?: (marks: OwnCommitMarks) => void;
  /** For tests: runs just before each COMMIT, to hold a group there. */
  readonly beforeCommit?: () => void;
  /** For tests: runs once a group has committed and published its marks, just before it answers. */
  readonly beforeAnswer?: () => void;
}

/**
 * Runs the store's group transactions on one connection: each `begin` and `commit` request of a
 * group in turn, answering each. Every row of an append is `executeAppend`'s (through `appendAll`),
 * as prepared statements here; faults come back untranslated, for the store to translate once.
 */
export function createGroupWriter(options: GroupWriterOptions): { handle(request: GroupRequest): Promise<GroupReply> } {
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

  async function connected(reopen: boolean): Promise<WriterConnection> {
    if (reopen || !connection) {
      closeConnection();
      connection = await options.connect();
    }
    return connection;
  }

  async function beginGroup(ids: number, reopen: boolean): Promise<GroupReply> {
    const { mark } = await connected(reopen);
    try {
      begin().run([]);
    } catch (error) {
      // The busy timeout has passed: SQLite waited for the lock by sleeping on this thread.
      if (sqliteFault(error) === 'busy') return { kind: 'busy' };
      throw error;
    }
    // Under the write lock no other connection commits: this is the mark the group's commit follows.
    versionAtBegin = readDataVersion();
    before = readMark(mark);
    if (ids === 0) return { kind: 'begun', first: 0 };
    const last = (readLastId().all([])[0] as { value: number }).value;
    // Taken whatever becomes of the appends: an id whose append is refused is never handed out again.
    writeLastId().run([last + ids]);
    return { kind: 'begun', first: last + 1 };
  }

  async function commitGroup({ appends, writeHealthRow: healthRow, now }: CommitRequest): Promise<GroupReply> {
    const outcomes: ({ result: AppendResult } | { error: SerializedError })[] = new Array(appends.length);
    const pending: PendingAppend[] = appends.map((request, index) => ({
      request,
      resolve: (result) => void (outcomes[index] = { result }),
      reject: (error) => void (outcomes[index] = { error: serializeError(error) }),
      observed: undefined,
    }));
    const began = performance.timeOrigin + performance.now();
    // Read when the group's first event is given its position: a group that appends nothing needs no log end.
    let end: number | undefined;
    const rows = new GroupRows((index) => (end ??= (logEnd().all([])[0] as { last: number }).last) + 1 + index);
    // Every stream is read, new pets' too: a stream may have been written around the sequence.
    const wanted = rows.toRead(pending);
    if (wanted) rows.load(readGroup(wanted, now));
    const outcome = await appendAll({ rows, failsGroup }, pending, new Date(now));
    writeGroup(rows.writes());
    if (healthRow) writeHealthRow().run([now]);
    options.beforeCommit?.();
    commit().run([]);
    const committed = performance.timeOrigin + performance.now();
    // Committed: nothing from here on fails the group. An unreadable mark is an unknown one, and the
    // store then takes the commit for "anything may have changed".
    let after = readMark(connection!.mark);
    try {
      // Read after the mark: had another connection committed since ours, data_version would have moved.
      if (readDataVersion() !== versionAtBegin) after = new Uint8Array();
    } catch {
      after = new Uint8Array();
    }
    if (before.length > 0 && after.length > 0) options.published?.({ before, after });
    for (const answer of outcome.answers) answer();
    options.beforeAnswer?.();
    return { kind: 'committed', outcomes, changes: outcome.changes, before, after, began, committed };
  }

  function runStatement(sql: string, parameters: readonly unknown[]): GroupReply {
    try {
      const statement = connection!.database.prepare(sql);
      if (statement.reader) return { kind: 'rows', rows: statement.all(parameters) };
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { kind: 'rows', rows: [], changes: Number(changes), lastInsertRowid: Number(lastInsertRowid) };
    } catch (error) {
      return { kind: 'failed', error: serializeError(error) };
    }
  }

  return {
    async handle(request) {
      try {
        if (request.kind === 'commit') return await commitGroup(request);
        if (request.kind === 'statement') return runStatement(request.sql, request.parameters);
        if (request.kind === 'close') {
          closeConnection();
          return { kind: 'done' };
        }
        if (request.kind === 'rollback') {
          rollBack();
          return { kind: 'done' };
        }
        if (request.kind === 'pragma') {
          (await connected(false)).database.prepare(`pragma ${request.pragma}`).all([]);
          return { kind: 'done' };
        }
        const begun = await beginGroup(request.ids, request.reopen);
        if (begun.kind !== 'begun' || !request.commit) return begun;
        return await commitGroup(request.commit);
      } catch (error) {
        if (connection) rollBack();
        return { kind: 'failed', error: serializeError(error) };
      }
    },
  };
}
