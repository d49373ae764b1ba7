import { parentPort, workerData } from 'node:worker_threads';
import { openCommitMark, publishedMarks } from './sqlite-catalog-changes.ts';
import { createGroupWriter } from './group-writer.ts';
import type { GroupRequest } from './group-writer.ts';
import { openConfigured } from './open-sqlite.ts';
import type { SqliteDriverName } from './sqlite-connection.ts';
import { withStatementCache } from './sqlite-kysely-dialect.ts';

/** What the store gives its writer thread (see group-writer-channel.ts). */
export interface GroupWriterThreadData {
  readonly file: string;
  readonly driver: SqliteDriverName;
  /** SQLite's busy timeout on this thread: how long a group waits for a write lock another connection holds. */
  readonly lockWaitMs: number;
  /** See `PublishedMarks`. */
  readonly marks: SharedArrayBuffer;
  /**
   * For tests: while the gate's first word is 0, each group waits (at most `holdMs`), its second word 1
   * meanwhile: just before its COMMIT, or once committed, just before it answers. A first word of 2
   * ends the thread where it waited, as a crash of the writer would.
   */
  readonly holdCommits?: { readonly gate: SharedArrayBuffer; readonly holdMs: number; readonly at: 'commit' | 'answer' };
}

// The store's group writer on a thread of its own: SQLite's waits (for the write lock, for the commit's
// fsync) sleep here, never on the event loop.
const data = workerData as GroupWriterThreadData;
const marks = publishedMarks(data.marks);
const gate = data.holdCommits ? new Int32Array(data.holdCommits.gate) : undefined;
const writer = createGroupWriter({
  async connect() {
    const connection = await openConfigured(data.file, data.driver, data.lockWaitMs);
    const database = withStatementCache(connection);
    try {
      const mark = openCommitMark(database, data.file);
      return {
        database,
        mark,
        close() {
          mark.close();
          database.close();
        },
      };
    } catch (error) {
      database.close();
      throw error;
    }
  },
  published: marks.publish,
  ...(gate ? {
    [data.holdCommits!.at === 'commit' ? 'beforeCommit' : 'beforeAnswer']() {
      Atomics.store(gate, 1, 1);
      const waited = Atomics.wait(gate, 0, 0, data.holdCommits!.holdMs) !== 'not-equal';
      Atomics.store(gate, 1, 0);
      if (waited && Atomics.load(gate, 0) === 2) process.exit(1);
    },
  } : {}),
});

parentPort!.on('message', (request: string) => {
  void writer.handle(JSON.parse(request) as GroupRequest).then((reply) => parentPort!.postMessage(reply));
});
