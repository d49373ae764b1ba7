import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { CatalogChanges, CatalogListener, PetChange } from '../../application/index.ts';

/** The store's side of `CatalogChanges`: it reports its own commits through `committed`. */
export interface CatalogWatch extends CatalogChanges {
  /**
   * Brackets a write of the store's own, run synchronously while holding the connection: reports
   * anything that was not the store's first, then the write, then the pets it changed.
   */
  around<T>(write: () => T, changesOf: (result: T) => readonly PetChange[]): T;
}

interface Marks {
  /** Rows changed by this connection since it opened (SQLite's `total_changes()`). */
  readonly changes: number;
  /** Changes whenever another connection commits (`PRAGMA data_version`). */
  readonly dataVersion: number;
}

/**
 * Notices every commit that could change the read model, cheaply: one prepared statement reads how
 * many rows this connection has changed and SQLite's `data_version`, which moves when any other
 * connection (another process) commits. The store's own writes are bracketed by `around`, so they are
 * reported precisely; any other movement of either number is reported as "anything may have changed".
 */
export function createCatalogWatch(database: SqliteDatabase): CatalogWatch {
  const marksStatement: SqliteStatement = database.prepare('select total_changes() as changes, data_version as dataVersion from pragma_data_version');
  const read = (): Marks => marksStatement.all([])[0] as Marks;
  const listeners: CatalogListener[] = [];
  let seen = read();

  const tell = (changes: readonly PetChange[] | undefined) => {
    for (const listener of listeners) listener(changes);
  };
  const refresh = () => {
    const now = read();
    if (now.changes === seen.changes && now.dataVersion === seen.dataVersion) return;
    seen = now;
    tell(undefined);
  };

  return {
    subscribe(listener) {
      listeners.push(listener);
    },
    refresh,
    around<T>(write: () => T, changesOf: (result: T) => readonly PetChange[]): T {
      refresh();
      const before = seen;
      let result: T;
      try {
        result = write();
      } finally {
        const after = read();
        // Another process committed while this write waited for the lock: its changes are unknown.
        if (after.dataVersion !== before.dataVersion) tell(undefined);
        seen = after;
      }
      const changed = changesOf(result);
      if (changed.length > 0) tell(changed);
      return result;
    },
  };
}
