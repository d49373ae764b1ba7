import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from 'kysely';
import { createGroupWriter } from './group-writer.ts';
import type { GroupReply, GroupRequest } from './group-writer.ts';
import type { GroupWriterThreadData } from './group-writer-thread.ts';
import { openCommitMark } from './sqlite-catalog-changes.ts';

/** Where the store's group transactions run: one request at a time, each answered. */
export interface GroupWriterChannel {
  send(request: GroupRequest): Promise<GroupReply>;
  /** Ends the writer once nothing is asked of it any more. */
  close(): Promise<void>;
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

  const channel: GroupWriterChannel = {
    send(request) {
      worker ??= start();
      // Keeps the process alive while a group is under way, and only then.
      worker.ref();
      // As JSON text: cheaper to copy across than the structured clone of many small objects.
      worker.postMessage(JSON.stringify(request));
      return new Promise((resolve) => waiting.push(resolve));
    },
    async close() {
      if (!worker) return;
      // Its connection closed on the thread, as a connection should be, before the thread ends.
      await channel.send({ kind: 'close' });
      const ending = worker;
      worker = undefined;
      await ending?.terminate();
    },
  };
  return channel;
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
  return {
    send: (request) => writer.handle(request),
    close: async () => {},
  };
}
