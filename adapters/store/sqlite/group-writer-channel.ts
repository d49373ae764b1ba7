import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from 'kysely';
import { createGroupWriter } from './group-writer.ts';
import { deserializeError } from './group-writer.ts';
import type { CommitRequest, GroupReply, GroupRequest } from './group-writer.ts';
import type { AppendResult } from '../../../application/index.ts';
import type { PetChange } from '../catalog-changes.ts';
import type { OwnCommitMarks } from './sqlite-catalog-changes.ts';
import type { GroupWriterThreadData } from './group-writer-thread.ts';
import { openCommitMark } from './sqlite-catalog-changes.ts';

/** What `begin` found: the write lock taken, the new pet ids drawn from `first` on; or `busy`: it stayed taken for the writer's whole wait. */
export type Begun = { readonly first: number } | 'busy';

/** A group's appends and writes, for `commit`: run in the transaction `begin` opened, then COMMIT. */
export type GroupToCommit = Omit<CommitRequest, 'kind'>;

/** A committed group: each append's outcome in the order asked (a refused one with the plan's error), the pets changed, the file's marks around it. */
export interface GroupCommitted extends OwnCommitMarks {
  readonly outcomes: readonly ({ readonly result: AppendResult } | { readonly error: Error })[];
  readonly changes: readonly PetChange[];
  /** When the appends began to run and when COMMIT returned, as `performance.timeOrigin + performance.now()`. */
  readonly began: number;
  readonly committed: number;
}

export interface StatementResult {
  readonly rows: readonly unknown[];
  readonly changes?: number | undefined;
  readonly lastInsertRowid?: number | undefined;
}

/**
 * The store's group writer, wherever it runs (a thread of its own, or this one for a memory database):
 * one call at a time. A group is `begin`, then `commit` or `rollback`. A failure is the writer's error
 * as raised (the driver's, or the append plan's; not yet translated), and a failed `begin` or `commit`
 * has rolled back. How the calls cross to the thread is this file's alone.
 */
export interface GroupWriterChannel {
  begin(ids: number, reopen?: boolean): Promise<Begun>;
  /** `begin` (drawing no ids) and `commit` in one crossing. */
  beginAndCommit(group: GroupToCommit, reopen: boolean): Promise<GroupCommitted | 'busy'>;
  commit(group: GroupToCommit): Promise<GroupCommitted>;
  /** A statement of a write beside the groups, between `begin` and `commit`; a failure leaves the transaction to the caller. */
  statement(sql: string, parameters: readonly unknown[]): Promise<StatementResult>;
  rollback(): Promise<void>;
  /** A setting that holds per connection (`max_page_count`), given outside any group. */
  pragma(pragma: string): Promise<void>;
  /** Ends the writer once nothing is asked of it any more. */
  close(): Promise<void>;
}

/** The typed calls over the writer's messages. */
function overMessages(send: (request: GroupRequest) => Promise<GroupReply>, close: () => Promise<void>): GroupWriterChannel {
  const failed = (reply: GroupReply): never => {
    throw reply.kind === 'failed' ? deserializeError(reply.error) : new Error(`the group writer answered ${reply.kind}`);
  };
  const committed = (reply: GroupReply): GroupCommitted => {
    if (reply.kind !== 'committed') return failed(reply);
    return { ...reply, outcomes: reply.outcomes.map((outcome) => ('result' in outcome ? outcome : { error: deserializeError(outcome.error) })) };
  };
  return {
    async begin(ids, reopen = false) {
      const reply = await send({ kind: 'begin', ids, reopen });
      if (reply.kind === 'begun') return { first: reply.first };
      return reply.kind === 'busy' ? 'busy' : failed(reply);
    },
    async beginAndCommit(group, reopen) {
      const reply = await send({ kind: 'begin', ids: 0, reopen, commit: { kind: 'commit', ...group } });
      return reply.kind === 'busy' ? 'busy' : committed(reply);
    },
    commit: async (group) => committed(await send({ kind: 'commit', ...group })),
    async statement(sql, parameters) {
      const reply = await send({ kind: 'statement', sql, parameters });
      return reply.kind === 'rows' ? { rows: reply.rows, changes: reply.changes, lastInsertRowid: reply.lastInsertRowid } : failed(reply);
    },
    async rollback() {
      await send({ kind: 'rollback' });
    },
    async pragma(pragma) {
      const reply = await send({ kind: 'pragma', pragma });
      if (reply.kind === 'failed') failed(reply);
    },
    close,
  };
}

/**
 * The group writer on a worker thread with a connection of its own, started at the first request
 * (and again after it stopped). The thread's module is TypeScript from the sources (through tsx on
 * Node, natively on Deno) or JavaScript in the built service, whichever this module is.
 */
export function groupWriterThread(data: GroupWriterThreadData): GroupWriterChannel {
  let worker: Worker | undefined;
  const waiting: ((reply: GroupReply) => void)[] = [];

  const stopped = (why: string) => {
    worker = undefined;
    for (const answer of waiting.splice(0)) answer({ kind: 'failed', error: { unavailable: `the store's writer stopped (${why}); try again` } });
  };

  function start(): Worker {
    const started = spawn(data);
    started.on('message', (reply: GroupReply) => {
      waiting.shift()?.(reply);
      if (waiting.length === 0) started.unref();
    });
    started.on('error', (error) => stopped(error.message));
    started.on('exit', (code) => {
      if (worker === started) stopped(`exit code ${code}`);
    });
    return started;
  }

  const send = (request: GroupRequest): Promise<GroupReply> => {
    worker ??= start();
    // Keeps the process alive while a group is under way, and only then.
    worker.ref();
    // As JSON text: cheaper to copy across than the structured clone of many small objects.
    worker.postMessage(JSON.stringify(request));
    return new Promise((resolve) => waiting.push(resolve));
  };
  return overMessages(send, async () => {
    if (!worker) return;
    // Its connection closed on the thread, as a connection should be, before the thread ends.
    await send({ kind: 'close' });
    const ending = worker;
    worker = undefined;
    await ending?.terminate();
  });
}

function spawn(workerData: GroupWriterThreadData): Worker {
  const source = import.meta.url.endsWith('.ts');
  const entry = new URL(source ? './group-writer-thread.ts' : './group-writer-thread.js', import.meta.url);
  if (!source || process.versions.deno !== undefined) return new Worker(entry, { workerData });
  return new Worker(new URL('./typescript-thread.mjs', import.meta.url), { workerData: { ...workerData, entry: entry.href } });
}

/**
 * The group writer on the calling thread, on the store's own connection: for an in-memory database,
 * which no other connection can open. Its commits block the event loop, as a memory database's cost nothing.
 */
export function groupWriterInProcess(database: SqliteDatabase, file: string): GroupWriterChannel {
  const writer = createGroupWriter({
    connect: async () => ({ database, mark: openCommitMark(database, file), close() {} }),
  });
  return overMessages((request) => writer.handle(request), async () => {});
}
