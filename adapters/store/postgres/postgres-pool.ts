import pg from 'pg';
import type { Logger } from 'pino';

export interface PostgresSettings {
  /** A postgres:// or postgresql:// URL. */
  readonly url: string;
  /** At most this many connections from this process. */
  readonly poolSize: number;
  /**
   * The server cancels a statement that runs longer (milliseconds, 0: never), and a request waits
   * at most this long for a connection; either way the request fails fast with 503 instead of hanging.
   */
  readonly statementTimeoutMs: number;
}

const INT8 = 20;
/** How long to wait for a connection when statements have no timeout (migrations, the CLI). */
const NO_TIMEOUT_CONNECT_MS = 10_000;

/**
 * bigint columns reach the application as JavaScript numbers, like SQLite's integers. Ids, positions
 * and counts stay far below 2^53 in practice; one that does not is an error rather than a rounded number.
 */
export function parseSafeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`the database returned ${text}, beyond 2^53-1`);
  return value;
}

/** bigint columns as JavaScript numbers (`parseSafeInteger`), on every connection of the store. */
export const SAFE_INTEGER_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary' ? parseSafeInteger : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** Statement texts prepared once a connection and then only bound and run: the hot ones, by text. */
const preparedNames = new Map<string, string>();
/** A bound on what each connection keeps prepared on the server. */
const MOST_PREPARED = 64;

/**
 * Marks a statement's text as prepared: each pooled connection parses and plans it once, then only
 * binds and runs it (the append's statements, the listing cache's look). Returns the text.
 */
export function prepared(text: string): string {
  if (!preparedNames.has(text) && preparedNames.size < MOST_PREPARED) preparedNames.set(text, `petstore_${preparedNames.size + 1}`);
  return text;
}

/** Runs the texts marked `prepared` as named statements on this connection. */
function preparing(client: pg.PoolClient): void {
  const plain = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((config: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof config === 'string' ? preparedNames.get(config) : undefined;
    if (name === undefined) return plain(config, values, callback);
    return callback === undefined ? plain({ name, text: config, values }) : plain({ name, text: config, values }, callback);
  }) as typeof client.query;
}

/** A pool that survives the server going away: broken connections are dropped, new ones opened on demand. */
export function createPostgresPool(settings: PostgresSettings, logger?: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.statementTimeoutMs || NO_TIMEOUT_CONNECT_MS,
    statement_timeout: settings.statementTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'petstore',
    types: SAFE_INTEGER_TYPES,
  });
  // An idle connection that dies (server restart, network) is reported here; without a listener the
  // process would crash. The pool has already discarded it and connects afresh when next needed.
  pool.on('error', (error) => logger?.warn({ reason: connectionFault(error) }, 'an idle database connection failed; it was dropped'));
  pool.on('connect', (client) => {
    // The pool listens for a connection's errors only while it is idle: one that dies while checked out
    // would emit an 'error' nobody hears and crash the process. Its query fails (a 503) and it is dropped.
    client.on('error', ignoreCheckedOutFault);
    preparing(client);
    if (settings.statementTimeoutMs > 0) answeringWithin(client, settings.statementTimeoutMs);
  });
  if (settings.statementTimeoutMs > 0) sharingOneTimeout(pool, settings.statementTimeoutMs);
  return pool;
}

/**
 * A statement the server did not answer within its timeout and a little more: the server could not
 * cancel it (its backend stopped, the network dropping packets). Its connection was given up.
 */
export class StatementUnanswered extends Error {
  constructor(ms: number) {
    super(`the database did not answer within ${ms} ms`);
    this.name = 'StatementUnanswered';
  }
}

/** How long past its own timeout the server has to answer a statement, before the service gives up on it. */
const SERVER_CANCEL_GRACE_MS = 200;

/**
 * Bounds each statement on the service's side: a server that cannot enforce its own statement timeout
 * (a stopped backend, a network that drops packets) would otherwise hold the request, and the group
 * commit behind it, for as long as it lasts. Past the timeout in effect on the connection and a little
 * more, the statement fails (a 503) and the connection is ended at once, never returned to the pool:
 * its backend may still hold the append lock or be mid-transaction. An unanswered COMMIT is
 * indeterminate: its writes are answered 503, never acknowledged.
 */
export function answeringWithin(client: pg.Client | pg.PoolClient, timeoutMs: number): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((config: unknown, values?: unknown, callback?: unknown) => {
    // The callback form (the pool's own `pool.query`) and a submittable (a cursor) are not the service's: Kysely asks for promises.
    const submittable = typeof (config as { submit?: unknown } | null)?.submit === 'function';
    if (submittable || typeof values === 'function' || callback !== undefined) return query(config, values, callback);
    const answer = query(config, values) as Promise<unknown>;
    const ms = (shortenedTimeouts.get(client) ?? timeoutMs) + SERVER_CANCEL_GRACE_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unanswered = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Ending the connection fails the statement still in flight (its failure is this one's), and the pool drops it on release.
        answer.catch(() => {});
        void client.end().catch(() => {});
        reject(new StatementUnanswered(ms));
      }, ms);
    });
    return Promise.race([answer, unanswered]).finally(() => clearTimeout(timer));
  }) as typeof client.query;
}

/** Waits for a connection shorter than this share of the timeout leave the statement its whole timeout. */
const UNNOTICED_WAIT = 0.01;
/** The statement timeout each connection was last set to, where it is not the pool's own. */
const shortenedTimeouts = new WeakMap<pg.ClientBase, number>();

/**
 * One budget for waiting for a connection and running on it: a request that waited for a connection
 * gets only the rest of `timeoutMs` for its statement, so it is answered (or refused with 503) within
 * `timeoutMs`, not twice that. Costs a statement only on a connection waited for, and on its next use.
 */
function sharingOneTimeout(pool: pg.Pool, timeoutMs: number): void {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const connectAsKysely = async (): Promise<pg.PoolClient> => {
    const asked = performance.now();
    const client = await connect();
    const waited = performance.now() - asked;
    const wanted = waited < timeoutMs * UNNOTICED_WAIT ? timeoutMs : Math.max(1, Math.floor(timeoutMs - waited));
    if ((shortenedTimeouts.get(client) ?? timeoutMs) === wanted) return client;
    try {
      await client.query(`set statement_timeout = ${wanted}`);
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    if (wanted === timeoutMs) shortenedTimeouts.delete(client);
    else shortenedTimeouts.set(client, wanted);
    return client;
  };
  // Kysely asks for connections as promises; the callback form (pool.query's own) keeps the pool's way.
  pool.connect = ((callback?: unknown) => (callback === undefined ? connectAsKysely() : (connect as (cb: unknown) => void)(callback))) as typeof pool.connect;
}

/** The query in flight already carries the fault to its request; the pool drops the connection on release. */
function ignoreCheckedOutFault(): void {}

/** A connection's fault in a few words for the log (the error's own fields may hold the whole client). */
export function connectionFault(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}
