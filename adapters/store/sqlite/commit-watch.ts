import { closeSync, openSync, readSync } from 'node:fs';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { CatalogChanges, CatalogListener, PetChange } from '../catalog-changes.ts';

/** The store's side of `CatalogChanges`. */
export interface CatalogWatch extends CatalogChanges {
  /**
   * Brackets a write of the store's own, run while holding the connection: reports
   * anything that was not the store's first, then runs the write, then reports the pets it changed.
   */
  around<T>(write: () => Promise<T>, changesOf: (result: T) => readonly PetChange[]): Promise<T>;
  close(): void;
}

/** Something that changes whenever a commit becomes visible on the file, compared as bytes. */
interface CommitMark {
  /** The current mark, valid until the next read (copy it to keep it). */
  read(): Buffer;
  close(): void;
}

// The WAL-index header at the start of the -shm file (https://www.sqlite.org/walformat.html): every
// connection of every process rewrites it on each commit (a change counter, the last frame, salts and
// checksums), and a commit is visible to readers only once it is rewritten.
const WAL_INDEX_HEADER_BYTES = 48;

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
 * in any process, including writes that went around the store; the store's own writes are bracketed by
 * `around` and reported precisely, anything else as "anything may have changed".
 */
export function createCatalogWatch(database: SqliteDatabase, file: string): CatalogWatch {
  const journalMode = (database.prepare('pragma journal_mode').all([])[0] as { journal_mode: string }).journal_mode;
  const mark = (journalMode === 'wal' ? walIndexHeader(file) : undefined) ?? statementMark(database);
  // Prepared through the store's cache at each use: the store may reopen its connection after a fault.
  const readDataVersion = () => (database.prepare('pragma data_version').all([])[0] as { data_version: number }).data_version;
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

  /**
   * After a write of the store's own: takes the new mark as seen, unless another process committed
   * meanwhile (what it changed is unknown). The write may have committed, so this never throws: when
   * the marks cannot be read, the listeners hear that anything may have changed.
   */
  const settle = (versionBefore: number) => {
    try {
      const after = Buffer.from(mark.read());
      if (readDataVersion() !== versionBefore) tell(undefined);
      seen = after;
    } catch {
      seen = Buffer.alloc(0);
      tell(undefined);
    }
  };

  return {
    subscribe(listener) {
      listeners.push(listener);
    },
    refresh,
    async around<T>(write: () => Promise<T>, changesOf: (result: T) => readonly PetChange[]): Promise<T> {
      // data_version moves only for other connections' commits: read before the mark, so that a commit
      // landing between the two is caught by one or the other.
      const versionBefore = readDataVersion();
      refresh();
      let result: T;
      try {
        result = await write();
      } finally {
        settle(versionBefore);
      }
      const changed = changesOf(result);
      if (changed.length > 0) tell(changed);
      return result;
    },
    close: () => mark.close(),
  };
}
