import { sql } from 'kysely';
import { loadConfig } from '../config.ts';
import { openSqlite } from '../sqlite/open-sqlite.ts';

/** Opens the configured database (migrating it when asked), runs `work`, and closes it whatever happens. */
export async function withDatabase<T>(path: string, migrate: boolean, work: (db: Awaited<ReturnType<typeof openSqlite>>['db']) => Promise<T>): Promise<T> {
  const { db } = await openSqlite(path, { migrate });
  try {
    if (!migrate) await sql`select 1`.execute(db);
    return await work(db);
  } finally {
    await db.destroy();
  }
}

/** `withDatabase` on the database the environment configures (PETSTORE_DATABASE). */
export function withConfiguredDatabase<T>(migrate: boolean, work: (db: Awaited<ReturnType<typeof openSqlite>>['db']) => Promise<T>): Promise<T> {
  return withDatabase(loadConfig(process.env).database, migrate, work);
}
