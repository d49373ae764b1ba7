import { ConfigError } from './config-error.ts';

/** Where the pets live: a SQLite file, or a PostgreSQL database that many instances may share. */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      /** Connections per instance. */
      readonly poolSize: number;
      /** Longest a statement may run, and a request may wait for a connection. */
      readonly statementTimeoutMs: number;
    };

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;

/** The variables that say where the pets live (checked for shape before they get here). */
export interface DatabaseVariables {
  readonly PETSTORE_DATABASE?: string | undefined;
  readonly PETSTORE_DATABASE_POOL_SIZE?: string | undefined;
  readonly PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS?: string | undefined;
}

const POSTGRES_SCHEME = /^postgres(ql)?:/i;
// A scheme of two characters or more and a colon: `C:\data` stays a Windows path, `mysql://x` is a URL.
const URL_SCHEME = /^[a-z][a-z0-9+.-]+:/i;

/**
 * A postgres:// or postgresql:// URL selects PostgreSQL; another URL is refused rather than taken for a
 * file name; anything else is a SQLite path (one that must begin like a URL can be written ./name).
 */
export function databaseConfig(env: DatabaseVariables): DatabaseConfig {
  const value = env.PETSTORE_DATABASE ?? './data/petstore.db';
  // The value may hold a password: no message repeats it, not even its scheme.
  if (!POSTGRES_SCHEME.test(value)) {
    if (!URL_SCHEME.test(value)) return { kind: 'sqlite', path: value };
    throw new ConfigError(
      'PETSTORE_DATABASE is invalid: it begins like a URL of a kind this service does not speak; it takes a SQLite file path ' +
        '(such as ./data/petstore.db) or a PostgreSQL URL (postgres://user:password@host:5432/database)',
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !value.slice(url.protocol.length).startsWith('//')) {
    throw new ConfigError('PETSTORE_DATABASE is invalid: a PostgreSQL URL looks like postgres://user:password@host:5432/database');
  }
  return {
    kind: 'postgres',
    url: value,
    poolSize: Number(env.PETSTORE_DATABASE_POOL_SIZE ?? DEFAULT_POOL_SIZE),
    statementTimeoutMs: Number(env.PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS ?? DEFAULT_STATEMENT_TIMEOUT_MS),
  };
}

/** A PostgreSQL URL as a message may show it: the password replaced by `***`. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return 'PETSTORE_DATABASE';
  }
}
