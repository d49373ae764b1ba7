import { StoreUnavailable } from '../../application/index.ts';

/** SQLite's own failures, in the application's words: a lock held past the busy timeout is `StoreUnavailable`. */
export function storeError(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) {
    return new StoreUnavailable('the database is busy; try again', { cause: error });
  }
  return error;
}

export async function translateErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw storeError(error);
  }
}
