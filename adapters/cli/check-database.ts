import { loadConfig } from '../config/config.ts';
import { checkPages } from '../store/sqlite/open-sqlite.ts';
import { openSqliteConnection } from '../store/sqlite/sqlite-driver.ts';
import { DatabaseUnusable } from '../store/database-unusable.ts';
import { requireExistingDatabase } from './with-database.ts';

/** Every problem SQLite's full integrity check finds in the configured file; none when it is sound. */
export async function checkConfiguredDatabase(environment: Readonly<Record<string, string | undefined>>): Promise<string[]> {
  const { database } = loadConfig(environment);
  if (database.kind !== 'sqlite') throw new Error('petstore check reads SQLite files; PostgreSQL checks its own pages (see amcheck)');
  requireExistingDatabase(database);
  let connection;
  try {
    connection = await openSqliteConnection(database.path);
  } catch (error) {
    throw new DatabaseUnusable(`the database ${database.path} (PETSTORE_DATABASE) cannot be opened: ${(error as Error).message}`, { cause: error });
  }
  try {
    return checkPages(connection, 'integrity_check');
  } catch (error) {
    // A file too damaged to check at all is a finding, not a failure of the command.
    return [`${(error as Error).message}${typeof (error as { code?: unknown }).code === 'string' ? ` (${(error as { code: string }).code})` : ''}`];
  } finally {
    connection.close();
  }
}
