// SQLite's primary result codes by number (sqlite3.h), and the extended codes the store tells apart.
const PRIMARY = [
  'OK', 'ERROR', 'INTERNAL', 'PERM', 'ABORT', 'BUSY', 'LOCKED', 'NOMEM', 'READONLY', 'INTERRUPT', 'IOERR', 'CORRUPT',
  'NOTFOUND', 'FULL', 'CANTOPEN', 'PROTOCOL', 'EMPTY', 'SCHEMA', 'TOOBIG', 'CONSTRAINT', 'MISMATCH', 'MISUSE', 'NOLFS',
  'AUTH', 'FORMAT', 'RANGE', 'NOTADB', 'NOTICE', 'WARNING',
];

/** An extended code is its primary code plus (n << 8); these name n, from 1 up. */
const EXTENDED: Record<number, readonly string[]> = {
  5: ['RECOVERY', 'SNAPSHOT', 'TIMEOUT'],
  6: ['SHAREDCACHE', 'VTAB'],
  8: ['RECOVERY', 'CANTLOCK', 'ROLLBACK', 'DBMOVED', 'CANTINIT', 'DIRECTORY'],
  19: ['CHECK', 'COMMITHOOK', 'FOREIGNKEY', 'FUNCTION', 'NOTNULL', 'PRIMARYKEY', 'TRIGGER', 'UNIQUE', 'VTAB', 'ROWID', 'PINNED', 'DATATYPE'],
};

/**
 * The name better-sqlite3 puts in an error's `code` for an (extended) result code number, e.g.
 * 2067 → `SQLITE_CONSTRAINT_UNIQUE`, 5 → `SQLITE_BUSY`. Extended codes outside the table above are
 * named by their primary code.
 */
export function sqliteResultCodeName(code: number): string {
  const primary = PRIMARY[code & 0xff];
  if (primary === undefined) return `UNKNOWN_SQLITE_ERROR_${code}`;
  const extended = EXTENDED[code & 0xff]?.[(code >> 8) - 1];
  return extended === undefined ? `SQLITE_${primary}` : `SQLITE_${primary}_${extended}`;
}
