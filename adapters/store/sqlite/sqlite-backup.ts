import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { BUSY_TIMEOUT_MS } from './open-sqlite.ts';
import { backupWithNodeSqlite } from './node-sqlite-connection.ts';
import { sqliteDriverForThisRuntime } from './sqlite-connection.ts';
import { openSqliteConnection } from './sqlite-driver.ts';

/**
 * Copies the SQLite store at `source` to `target` while other connections read and write it.
 * `VACUUM INTO` (or, on node:sqlite, the online backup in one step) reads the whole file inside one
 * read transaction, so the copy is the store as of one commit: every write committed before it
 * began, none half. In WAL mode it does not block writers.
 * The copy is written beside the target under a temporary name, synced, then renamed over it, so
 * `target` is always either the previous file or the complete new one.
 */
export async function backupSqliteStore(source: string, target: string): Promise<{ bytes: number }> {
  if (source === ':memory:' || !existsSync(source)) throw new Error(`there is no SQLite store at ${source}`);
  const destination = resolve(target);
  if (destination === resolve(source)) throw new Error('the backup cannot replace the store it copies');
  const temporary = join(dirname(destination), `.${basename(destination)}.${process.pid}.tmp`);
  rmSync(temporary, { force: true });
  try {
    await copyConsistently(source, temporary);
    syncFile(temporary);
    renameSync(temporary, destination);
    syncFile(dirname(destination));
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return { bytes: statSync(destination).size };
}

async function copyConsistently(source: string, target: string): Promise<void> {
  if (sqliteDriverForThisRuntime() === 'node:sqlite') return backupWithNodeSqlite(source, target, BUSY_TIMEOUT_MS);
  const connection = await openSqliteConnection(source);
  try {
    connection.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    connection.prepare('VACUUM INTO ?').run([target]);
  } finally {
    connection.close();
  }
}

/** fsync a file or a directory, so a rename is durable and never points at unwritten data. */
function syncFile(path: string): void {
  const descriptor = openSync(path, 'r');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
