import type { Clock } from '../../application/index.ts';
import { createSqlPetStore } from '../sql/sql-pet-store.ts';
import type { SqlPetStore } from '../sql/sql-pet-store.ts';
import { openSqlite } from './open-sqlite.ts';
import { sqliteFlavour } from './sqlite-flavour.ts';

/** The pet store on one SQLite file, migrated unless `migrate` is false. */
export async function openSqlitePetStore(path: string, options: { clock?: Clock; migrate?: boolean } = {}): Promise<SqlPetStore> {
  const { db } = await openSqlite(path, options.migrate === undefined ? {} : { migrate: options.migrate });
  return createSqlPetStore(db, sqliteFlavour, { ...(options.clock ? { clock: options.clock } : {}), close: () => db.destroy() });
}
