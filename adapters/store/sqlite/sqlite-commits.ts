import { closeSync, openSync, readSync } from 'node:fs';
import { clearImmediate, setImmediate } from 'node:timers';
import type { SqliteDatabase } from 'kysely';
import type { Commit, Commits, RowChange } from '../../../application/index.ts';
import { createCommitListeners } from '../commit-listeners.ts';

/** How often the file is looked at for other processes' commits while anyone listens: one pread each time. */
export const OTHER_COMMITS_POLL_MS = 20;

/** The store's side of `Commits` on SQLite. */
export interface SqliteCommits extends Commits {
  /** Resolves after one look at the file that began after the call: at the end of this turn of the event loop, shared by every caller in it. */
  refresh(): Promise<void>;
  /**
   * A commit of the store's own, told as soon as COMMIT returned: `marks.before` read under its write
   * lock before it wrote, `marks.after` right after it committed (either empty when unknown: it could
   * not be read, or another connection may have committed between). Tells anything else seen since
   * the last mark as "anything may have changed", else the pets it changed.
   */
  committed(marks: OwnCommitMarks, commit: OwnCommit): void;
  close(): void;
}

/** What one commit of the store's own did: the log's last position after it (0: it appended nothing), the rows it changed and the types it appended. */
export interface OwnCommit {
  readonly last: number;
  readonly changes: readonly RowChange[];
  readonly types: readonly string[];
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
 * Notices every commit that could change the log or the read model, cheaply enough to ask before every
 * cached answer. In WAL mode it compares the WAL-index header, which moves with every commit of any
 * connection in any process, including writes that went around the store. The store's own commits (see
 * sqlite-writes.ts) are told precisely, from the marks read under their write lock; anything else as
 * "anything may have changed". While anyone listens, the file is looked at every `pollMs` for other
 * processes' commits (one pread each time); `refresh` looks once at the end of the turn, for every caller in it.
 */
export function createSqliteCommits(database: SqliteDatabase, file: string, pollMs = OTHER_COMMITS_POLL_MS): SqliteCommits {
  const mark = openCommitMark(database, file);
  let seen = Buffer.from(mark.read());
  let poll: ReturnType<typeof setInterval> | undefined;
  const stopPolling = () => {
    if (poll !== undefined) clearInterval(poll);
    poll = undefined;
  };
  const listeners = createCommitListeners({
    onFirstListener() {
      poll = setInterval(look, pollMs);
      poll.unref();
    },
    onLastListener: stopPolling,
  });
  const anythingChanged: Commit = {};

  /**
   * The look this turn's callers of `refresh` wait for. It runs once the turn has read what it will (the
   * check phase comes after the poll phase's reads of every ready socket), so it begins after every request
   * that asked in the turn arrived, and a burst of cached answers pays one read of the file, not one each.
   */
  let turnLook: { readonly looked: Promise<void>; readonly immediate: ReturnType<typeof setImmediate>; readonly done: () => void } | undefined;
  function refresh(): Promise<void> {
    if (turnLook === undefined) {
      let done!: () => void;
      const looked = new Promise<void>((resolve) => (done = resolve));
      const immediate = setImmediate(() => {
        turnLook = undefined;
        look();
        done();
      });
      turnLook = { looked, immediate, done };
    }
    return turnLook.looked;
  }

  function look(): void {
    let now: Buffer;
    try {
      now = mark.read();
    } catch {
      // The mark cannot be read (an I/O error): anything may have changed, and the next read decides afresh.
      seen = Buffer.alloc(0);
      listeners.tell(anythingChanged);
      return;
    }
    if (now.equals(seen)) return;
    seen = Buffer.from(now);
    listeners.tell(anythingChanged);
  }

  return {
    onCommitted: listeners.onCommitted,
    refresh,
    committed({ before, after }, { last, changes, types }) {
      let foreign = false;
      if (before.length === 0 || after.length === 0) {
        seen = Buffer.alloc(0);
        foreign = true;
      } else if (!seen.equals(after)) {
        foreign = !seen.equals(before);
        seen = Buffer.from(after);
      }
      // Another commit seen with this one: "anything may have changed" covers both.
      if (foreign) listeners.tell(last > 0 ? { last } : anythingChanged);
      else if (changes.length > 0 || types.length > 0) listeners.tell({ last, changes, types });
    },
    close() {
      stopPolling();
      if (turnLook !== undefined) {
        clearImmediate(turnLook.immediate);
        turnLook.done();
        turnLook = undefined;
      }
      mark.close();
    },
  };
}
