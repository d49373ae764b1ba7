import { openNodeSqliteConnection } from './node-sqlite-connection.ts';
import { sqliteDriverForThisRuntime } from './sqlite-connection.ts';
import type { SqliteConnection } from './sqlite-connection.ts';

/** Opens (and creates) the file with the given driver; better-sqlite3 is loaded only when chosen. */
export async function openSqliteConnection(path: string, driver = sqliteDriverForThisRuntime()): Promise<SqliteConnection> {
  if (driver === 'node:sqlite') return openNodeSqliteConnection(path);
  const { default: Database } = await import('better-sqlite3');
  // Structurally a SqliteConnection: better-sqlite3 binds an array argument as the positional parameters.
  return new Database(path) as unknown as SqliteConnection;
}
