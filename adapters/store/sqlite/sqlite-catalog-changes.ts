import { closeSync, openSync, readSync } from 'node:fs';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { CatalogChanges, CatalogListener, PetChange } from '../catalog-changes.ts';

/** The store's side of `CatalogChanges`. */
export interface SqliteCatalogChanges extends CatalogChanges {
  /**
   * A commit of the store's own, told as soon as COMMIT returned: `marks.before` read under its write
   * lock before it wrote, `marks.after` right after it committed (either empty when unknown: it could
   * not be read, or another connection may have committed between). Reports anything else seen since
   * the last mark, then the pets it changed.
   */
  committed(marks: OwnCommitMarks, changes: readonly PetChange[]): void;
  close(): void;
}

/** The marks around one commit of the store's own. */
export interface OwnCommitMarks {
  readonly before: Uint8Array;
  readonly after: Uint8Array;
}

/** Something that changes whenever a commit becomes visible on the file, compared as bytes. */
export interface CommitMark {
  /** The current mark, valid until the next read (copy it to keep it). */
  read(): Buffer;
  close(): void;
}

// The WAL-index header at the start of the -shm file (https://www.sqlite.org/walformat.html): every
// connection of every process rewrites it on each commit (a change counter, the last frame, salts and
// checksums), and a commit is visible to readers only once it is rewritten.
const WAL_INDEX_HEADER_BYTES = 48;

/** The file's commit mark as seen from `database`: its WAL-index header, or statements without a -shm file. */
export function openCommitMark(database: SqliteDatabase, file: string): CommitMark {
  const journalMode = (database.prepare('pragma journal_mode').all([])[0] as { journal_mode: string }).journal_mode;
  return (journalMode === 'wal' ? walIndexHeader(file) : undefined) ?? statementMark(database);
}

/** Reads the WAL-index header: one pread, no lock, a third of what `PRAGMA data_version` costs. */
function walIndexHeader(file: string): CommitMark | undefined {
  let fd: number;
  try {
    fd = openSync(`${file}-shm`, 'r');
  } catch {
    return undefined;
  }
  const buffer = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  return {
    read() {
      const length = readSync(fd, buffer, 0, WAL_INDEX_HEADER_BYTES, 0);
      return length === WAL_INDEX_HEADER_BYTES ? buffer : buffer.subarray(0, length);
    },
    close: () => closeSync(fd),
  };
}

/** Without a -shm file (an in-memory database): this connection's change count and SQLite's data_version. */
function statementMark(database: SqliteDatabase): CommitMark {
  const statement = database.prepare('select total_changes() as changes, data_version as version from pragma_data_version');
  return {
    read() {
      const { changes, version } = statement.all([])[0] as { changes: number; version: number };
      return Buffer.from(`${changes}/${version}`);
    },
    close() {},
  };
}

/**
 * Notices every commit that could change the read model, cheaply enough to ask before every cached
 * answer. In WAL mode it compares the WAL-index header, which moves with every commit of any connection
 * in any process, including writes that went around the store. The store's own commits (see
 * group-writer.ts) are reported precisely, from the marks read under their write lock; anything else
 * as "anything may have changed".
 */
export function createSqliteCatalogChanges(database: SqliteDatabase, file: string): SqliteCatalogChanges {
  const mark = openCommitMark(database, file);
  const listeners: CatalogListener[] = [];
  let seen = Buffer.from(mark.read());

  const tell = (changes: readonly PetChange[] | undefined) => {
    for (const listener of listeners) listener(changes);
  };
  const refresh = () => {
    let now: Buffer;
    try {
      now = mark.read();
    } catch {
      // The mark cannot be read (an I/O error): anything may have changed, and the next read decides afresh.
      seen = Buffer.alloc(0);
      tell(undefined);
      return;
    }
    if (now.equals(seen)) return;
    seen = Buffer.from(now);
    tell(undefined);
  };

  return {
    subscribe(listener) {
      listeners.push(listener);
    },
    refresh,
    committed({ before, after }, changes) {
      if (before.length === 0 || after.length === 0) {
        seen = Buffer.alloc(0);
        tell(undefined);
      } else if (!seen.equals(after)) {
        if (!seen.equals(before)) tell(undefined);
        seen = Buffer.from(after);
      }
      if (changes.length > 0) tell(changes);
    },
    close: () => mark.close(),
  };
}
