import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { CommitSignal } from '../../../application/index.ts';
import { createCommitSignal } from '../commit-signal.ts';
import { connectionFault, prepared, SAFE_INTEGER_TYPES } from './postgres-pool.ts';
import type { PetStoreDatabase } from '../schema.ts';

/** The channel each append notifies in its transaction, with its last position: delivered only once it commits. */
export const LOG_CHANNEL = 'petstore_log';

/** Notified instead of a position when the catalogue's rows were replaced without events (a projection rebuild). */
export const CATALOG_REPLACED = 'catalog replaced';

/** How often the log's head is read while anyone listens, for what a lost notification or connection would miss. */
export const HEAD_POLL_MS = 1000;
/** How long to wait before listening again after the listening connection failed. */
const RELISTEN_MS = 1000;

export interface PostgresCommitSignalOptions {
  /** Where to LISTEN; without it (PGlite in tests) only the head is polled. */
  readonly url?: string | undefined;
  /** The server cancels a statement on the listening connection that runs longer (milliseconds, 0: never). */
  readonly statementTimeoutMs?: number | undefined;
  readonly pollMs?: number;
  readonly logger?: Logger | undefined;
}

/**
 * Where the log ends: the position of its last committed event. Appends commit in the order of their
 * positions, so every position up to it is committed too.
 */
export const LOG_HEAD: ListeningStatement = { name: 'petstore_log_head', text: prepared('select max(position) as head from events') };

/** The head from `LOG_HEAD`'s rows, 0 when the log has no event. */
export const headOf = (rows: readonly { head: number | null }[]): number => Number(rows[0]?.head ?? 0);

/** The position of the log's last committed event, 0 when it has none. */
export async function readLogHead(db: Kysely<PetStoreDatabase>): Promise<number> {
  return headOf((await db.executeQuery<{ head: number | null }>(CompiledQuery.raw(LOG_HEAD.text, []))).rows);
}

export interface PostgresCommitSignal extends CommitSignal {
  /** This instance's own commit: told at once, without waiting for its notification to come back. */
  committed(position: number): void;
  /**
   * Runs a statement on the listening connection while it listens (undefined otherwise): a connection
   * that nothing else queues on, so the listing cache's look at the log waits behind no request's query.
   */
  queryWhileListening<Row>(statement: ListeningStatement, values: readonly unknown[]): Promise<Row[]> | undefined;
  close(): Promise<void>;
}

/** A statement the listening connection prepares once and then only binds and runs. */
export interface ListeningStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * The log may have grown: told by LISTEN on one connection of its own (every instance's appends notify
 * `LOG_CHANNEL` on commit), and by reading the log's head every `pollMs` as a fallback. Both run only
 * while anyone listens.
 */
export function postgresCommitSignal(db: Kysely<PetStoreDatabase>, options: PostgresCommitSignalOptions = {}): PostgresCommitSignal {
  const pollMs = options.pollMs ?? HEAD_POLL_MS;
  let head = 0;
  let poll: ReturnType<typeof setInterval> | undefined;
  let client: pg.Client | undefined;
  /** `client` once its LISTEN took effect. */
  let listening: pg.Client | undefined;
  let relisten: ReturnType<typeof setTimeout> | undefined;
  let active = false;

  const grewTo = (position: number | undefined) => {
    if (position !== undefined) {
      if (position <= head) return;
      head = position;
    }
    signal.committed(position);
  };

  const readHead = async () => {
    try {
      grewTo(await readLogHead(db));
    } catch {
      // The database is away: the next look tries again.
    }
  };

  const listen = async () => {
    if (!options.url || !active || client) return;
    const connection = new pg.Client({
      connectionString: options.url, application_name: 'petstore-log-listener', keepAlive: true, types: SAFE_INTEGER_TYPES,
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    });
    client = connection;
    const lost = (error?: Error) => {
      if (client !== connection) return;
      client = undefined;
      listening = undefined;
      connection.removeAllListeners('notification');
      void connection.end().catch(() => {});
      if (error) options.logger?.warn({ reason: connectionFault(error) }, 'the connection listening for commits failed; listening again');
      if (active) {
        relisten = setTimeout(() => void listen(), RELISTEN_MS);
        relisten.unref();
      }
    };
    connection.on('error', lost);
    connection.on('end', () => lost());
    connection.on('notification', (message) => {
      const position = Number(message.payload);
      grewTo(Number.isSafeInteger(position) ? position : undefined);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${LOG_CHANNEL}`);
      if (client === connection) listening = connection;
      // Commits between the last look and LISTEN taking effect were not notified to this connection.
      void readHead();
    } catch (error) {
      lost(error as Error);
    }
  };

  const stop = async () => {
    active = false;
    if (poll !== undefined) clearInterval(poll);
    if (relisten !== undefined) clearTimeout(relisten);
    poll = undefined;
    const connection = client;
    client = undefined;
    listening = undefined;
    await connection?.end().catch(() => {});
  };

  const signal = createCommitSignal({
    onFirstListener() {
      active = true;
      poll = setInterval(() => void readHead(), pollMs);
      poll.unref();
      void readHead();
      void listen();
    },
    onLastListener: () => void stop(),
  });
  return {
    onCommitted: signal.onCommitted,
    committed: grewTo,
    queryWhileListening<Row>(statement: ListeningStatement, values: readonly unknown[]) {
      return listening?.query<Row & pg.QueryResultRow>({ name: statement.name, text: statement.text, values: values as unknown[] }).then(({ rows }) => rows);
    },
    close: stop,
  };
}
