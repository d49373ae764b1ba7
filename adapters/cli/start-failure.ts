import { ConfigError, withoutPassword } from '../config/config.ts';
import type { Config, DatabaseConfig } from '../config/config.ts';
import { DatabaseUnusable } from '../store/database-unusable.ts';

// Why a listener could not open: each names the variable to change.
const LISTEN_FAILURES: Record<string, (config: Pick<Config, 'host' | 'port'>) => string> = {
  EADDRINUSE: ({ host, port }) => `PORT ${port} is already in use on ${host}: stop the process that listens there, or choose another PORT (0 picks a free one)`,
  EACCES: ({ port }) => `PORT ${port} needs privileges this process does not have: choose a PORT above 1023`,
  EADDRNOTAVAIL: ({ host }) => `HOST ${host} is not an address of this machine: use one of its interfaces, 127.0.0.1 or 0.0.0.0`,
};

// Codes that mean PostgreSQL could not be reached or would not let us in, not that it failed at work.
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', '28000', '28P01', '3D000']);

/** The deepest error of a `cause` chain that carries one of the codes asked for. */
function causeWithCode(error: unknown, codes: ReadonlySet<string> | Record<string, unknown>): (Error & { code: string }) | undefined {
  let found: (Error & { code: string }) | undefined;
  for (let current = error, depth = 0; current instanceof Error && depth < 10; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (codes instanceof Set ? codes.has(code) : Object.hasOwn(codes, code))) found = current as Error & { code: string };
  }
  return found;
}

/**
 * PostgreSQL that cannot be reached, told as the person starting the service needs it: the address
 * without its password, the variable, and the reason; undefined for any other failure.
 */
export function unreachableDatabase(database: DatabaseConfig, error: unknown): DatabaseUnusable | undefined {
  if (database.kind !== 'postgres') return undefined;
  const reason = causeWithCode(error, UNREACHABLE) ?? (/connection timeout|timeout expired/i.test(String((error as Error)?.message)) ? (error as Error) : undefined);
  if (reason === undefined) return undefined;
  return new DatabaseUnusable(`cannot reach PostgreSQL at ${withoutPassword(database.url)} (PETSTORE_DATABASE): ${reason.message}`, { cause: error });
}

/** A failure to start explained in words when it is the configuration's (the port, the host, the database); otherwise the error itself. */
export function explainedStartFailure(config: Config, error: unknown): unknown {
  const listen = causeWithCode(error, LISTEN_FAILURES);
  if (listen !== undefined) return new ConfigError(LISTEN_FAILURES[listen.code]!(config));
  return unreachableDatabase(config.database, error) ?? error;
}
