import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { LogPage } from '../sql-dialect.ts';

export interface LogReaderOptions {
  /** The database file, opened again on the thread. */
  readonly file: string;
  /** The page query: one row `{ last, text }`, given the position to read after and the page size. */
  readonly pageSql: string;
  readonly afterPosition: number;
  readonly limit: number;
  readonly busyTimeoutMs: number;
}

/** Pages the thread may read before the caller has taken them: it stays a little ahead, never far. */
const AHEAD = 3;

type Message = { page: LogPage } | { end: true } | { error: { message: string; code?: unknown } };

/**
 * The thread: a connection of its own that only reads, running the page query from one page's last
 * position to the next, a page whenever asked. Plain JavaScript run from this text, since a worker
 * thread on Node 20 cannot load TypeScript; it uses nothing but better-sqlite3.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { driver, file, pageSql, limit, busyTimeoutMs } = workerData;
const Database = require(driver);
let page;
let after = workerData.afterPosition;
parentPort.on('message', () => {
  try {
    if (!page) {
      const database = new Database(file, { fileMustExist: true });
      database.pragma('busy_timeout = ' + busyTimeoutMs);
      database.pragma('query_only = true');
      page = database.prepare(pageSql);
    }
    const row = page.get(after, limit);
    if (row.text === null) {
      parentPort.postMessage({ end: true });
      return;
    }
    after = row.last;
    parentPort.postMessage({ page: { text: row.text, last: row.last } });
  } catch (error) {
    parentPort.postMessage({ error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;

/**
 * Reads the log's pages on a worker thread with better-sqlite3, ahead of the caller, so that the
 * database's work and the caller's parsing overlap. The thread ends when the pages do, when the
 * caller stops taking them, or on the first error (which the caller gets, with its SQLite code).
 */
export async function* readLogOnThread(options: LogReaderOptions): AsyncGenerator<LogPage> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { ...options, driver } });
  const arrived: Message[] = [];
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  worker.on('message', (message: Message) => {
    arrived.push(message);
    wake?.();
  });
  worker.on('error', (error) => {
    failure = error;
    wake?.();
  });
  worker.on('exit', () => {
    failure ??= new Error('the log reader thread stopped');
    wake?.();
  });
  try {
    for (let asked = 0; asked < AHEAD; asked++) worker.postMessage('next');
    for (;;) {
      while (arrived.length === 0) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      const message = arrived.shift()!;
      if ('end' in message) return;
      if ('error' in message) throw Object.assign(new Error(message.error.message), { code: message.error.code });
      worker.postMessage('next');
      yield message.page;
    }
  } finally {
    await worker.terminate();
  }
}
