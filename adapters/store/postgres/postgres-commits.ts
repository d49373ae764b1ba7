import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { rowChangeOf, StoreUnavailable } from '../../../application/index.ts';
import type { Commits, LogQuery, RowChange, StoredEvent } from '../../../application/index.ts';
import { createCommitListeners } from '../commit-listeners.ts';
import { storedEventFromRow } from '../schema.ts';
import type { EventRow } from '../schema.ts';
import { LOG_END, logEndOf, POSTGRES_EVENTS_AFTER, readLogEnd } from '../sql-event-log.ts';
import { translated } from '../sql-dialect.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { afterArrivals } from '../write/commit-batcher.ts';
import { answeringWithin, connectionFault, prepared, SAFE_INTEGER_TYPES, StatementUnanswered } from './postgres-pool.ts';
import { LOG_CHANNEL, postgresSqlDialect } from './postgres-sql-dialect.ts';
import type { CommittedPositions, BatchPositions } from './postgres-writes.ts';

/** How often the log's head is read while anyone listens, for what a lost notification or connection would miss. */
export const HEAD_POLL_MS = 1000;
/** How long to wait before listening again after the listening connection failed. */
const RELISTEN_MS = 1000;
/**
 * How long a caller waits for a look, and how long one may run before this instance counts itself as not
 * following other instances' commits (not ready): a look takes milliseconds. A caller that waited this
 * long gets a `StoreUnavailable` and reads the database itself (the listing cache's branch) or answers 503.
 */
export const LOOK_BOUND_MS = 1000;
/**
 * Turns a look waits, before it asks, while callers keep asking for one (none when nobody asked in the
 * last turn): under load the callers read in the next turn share it too, for no wait when idle.
 */
const LOOK_FILL_TURNS = 1;
/** How many events one look reads; a follower further behind than this is told "anything may have changed" instead. */
export const CATCH_UP_EVENTS = 1000;

/** A statement the listening connection prepares once and then only binds and runs. */
export interface ListeningStatement {
  readonly name: string;
  readonly text: string;
}

/** Where the log ends (`LOG_END`), on the listening connection. */
export const LOG_HEAD: ListeningStatement = { name: 'petstore_log_head', text: prepared(LOG_END.postgres) };

/** The position of the log's last committed event, 0 when it has none. */
export async function readLogHead(db: Kysely<PetStoreDatabase>): Promise<number> {
  return readLogEnd(db, postgresSqlDialect);
}

// Precompiled: read whenever a look knows something was committed since the last.
const READ_LOG: ListeningStatement = { name: 'petstore_log_look', text: prepared(POSTGRES_EVENTS_AFTER) };

/** What a look asks of the log: where it ends (mostly, to learn that nothing is new) and the events after a position. */
export interface LogLooks {
  readLog(query: Pick<LogQuery, 'after' | 'limit'>): Promise<StoredEvent[]>;
  head(): Promise<number>;
}

export interface PostgresCommitsOptions {
  /** Where to LISTEN; without it (PGlite in tests) only the head is polled. */
  readonly url?: string | undefined;
  /** The server cancels a statement on the listening connection that runs longer (milliseconds, 0: never). */
  readonly statementTimeoutMs?: number | undefined;
  readonly pollMs?: number;
  readonly logger?: Logger | undefined;
  /** For tests: what the looks ask instead of the database. */
  readonly log?: LogLooks;
}

export interface PostgresCommits extends Commits {
  refresh(): Promise<void>;
  /** A group this instance committed: told at once when it directly follows what was told, else by a look. */
  committed(group: CommittedPositions): void;
  /**
   * The positions this instance's group drew and is about to commit (undefined once it is over): a
   * notification within them is that group's own, told by `committed` without a look.
   */
  committing(positions: BatchPositions | undefined): void;
  /**
   * Any instance's commit, as `LOG_CHANNEL` notifies it (the listening connection calls this): its last
   * position, or `undefined` when rows changed without events (a projection rebuild, `CATALOG_REPLACED`).
   */
  notified(position: number | undefined): void;
  /** Why this instance does not follow other instances' commits now (a look unanswered past `LOOK_BOUND_MS`), or undefined. */
  stalled(): StoreUnavailable | undefined;
  close(): Promise<void>;
}

/**
 * Every instance's commits on PostgreSQL, read from the log in position order (appends commit in the
 * order of their positions, see APPEND_LOCK), with the pets they changed and the statuses they left
 * and entered, so that the listing cache drops exactly what they touch and the feed reads on.
 *
 * While anyone listens, one connection of its own LISTENs (every instance's appends notify
 * `LOG_CHANNEL` on commit) and the log's head is read every `pollMs` as a fallback. A notification
 * starts a look at once; `refresh` looks too, and resolves only after a look that began after it was
 * called. One look answers every caller that arrived while the previous one was in flight (as a group
 * commit does for writes). Most looks find nothing new, so a look that no notification announced first
 * asks only where the log ends, and reads the events after the position already told only when the
 * log ends beyond it. A notified commit whose events cannot be read is told as "anything may have
 * changed", so that followers still learn the log grew. This instance's own groups need no look when
 * they directly follow what was told: their positions were drawn under the append lock, so no other
 * commit lies between.
 */
export function postgresCommits(db: Kysely<PetStoreDatabase>, options: PostgresCommitsOptions = {}): PostgresCommits {
  const pollMs = options.pollMs ?? HEAD_POLL_MS;
  /** Every commit up to this position has been told; undefined before the first look. */
  let told: number | undefined;
  /** The callers waiting for a look that has not begun yet, and when the first of them asked (`performance.now()`). */
  let waiting: { promise: Promise<void>; bounded: Promise<void>; resolve: () => void; reject: (error: unknown) => void; askedAt: number } | undefined;
  /** A notified position beyond `told`: worth a look even when nobody waits. */
  let notifiedUpTo = 0;
  /** The last position this instance knows committed, its own or notified, whether or not anyone listened. */
  let known = 0;
  /** A look is running, or about to: it will serve whoever asks meanwhile. */
  let looking = false;
  /**
   * Since when the look in flight has been awaited (`performance.now()`): its first caller's ask, whose bound
   * counts from then too, or the look's start when nobody asked; undefined between looks.
   */
  let lookBegan: number | undefined;
  /** A caller's bound passed while the look in flight ran: stalled, whatever the timers' clock and `performance.now()` say. */
  let boundPassed = false;
  /**
   * Positions this instance's group drew under the append lock and is committing: no other instance's.
   * Its notification may arrive before its COMMIT's answer; `committed` tells it then, or, should that
   * answer be lost, the next poll of the head.
   */
  let committing: BatchPositions | undefined;

  let poll: ReturnType<typeof setInterval> | undefined;
  let client: pg.Client | undefined;
  /** `client` once its LISTEN took effect. */
  let listening: pg.Client | undefined;
  let relisten: ReturnType<typeof setTimeout> | undefined;
  let active = false;

  const listeners = createCommitListeners({
    onFirstListener() {
      active = true;
      poll = setInterval(lookQuietly, pollMs);
      poll.unref();
      lookQuietly();
      void listen();
    },
    onLastListener: () => void stop(),
  });
  /** Gives up the listening connection, whose statement went unanswered: another is opened. */
  let giveUpListening: ((error: Error) => void) | undefined;
  const log = options.log ?? listeningLogLooks(db, () => listening, (error) => giveUpListening?.(error));

  /** Reads what was committed after `told`, tells it, and moves `told` on; `announced`: a notification said something is new. */
  async function look(announced: boolean): Promise<void> {
    if (told === undefined) {
      // The first look only learns where the log ends, and tells it if it may be news: a follower reads from its own position.
      told = await log.head();
      if (announced || told > known) listeners.tell({ last: told });
      return;
    }
    if (!announced && (await log.head()) <= told) return;
    const events = await log.readLog({ after: told, limit: CATCH_UP_EVENTS });
    // This instance's own group may have been told meanwhile, and with it what the read found.
    if (events.length === 0 || events.at(-1)!.position <= told) return;
    told = events.at(-1)!.position;
    if (events.length === CATCH_UP_EVENTS) {
      // Far behind: dropping everything is cheaper than reading on, and the log's end is found afresh.
      told = undefined;
      listeners.tell({});
      return look(false);
    }
    const changes = events.map(rowChangeOf);
    const types = [...new Set(events.map((stored) => stored.event.type))];
    listeners.tell(changes.includes(undefined) ? { last: told, types } : { last: told, changes: changes as RowChange[], types });
  }

  /** How many times a look was asked for: what `startLooking` watches to fill a look. */
  let asked = 0;

  /**
   * Starts looking after the current turn of the event loop, so that every request of the turn shares the
   * first look; while callers keep asking, a turn later (`LOOK_FILL_TURNS`), so that the next turn's do too.
   */
  function startLooking(): void {
    if (looking) return;
    looking = true;
    afterArrivals(() => asked, LOOK_FILL_TURNS, () => void lookWhileWanted());
  }

  /** A notification told of a commit beyond what was told. */
  const announced = () => notifiedUpTo > 0 && (told === undefined || notifiedUpTo > told);

  async function lookWhileWanted(): Promise<void> {
    try {
      while (waiting !== undefined || announced()) {
        const callers = waiting;
        waiting = undefined;
        const lookAnnounced = announced();
        const position = notifiedUpTo;
        // A notification during this look asks for another; a failed look waits for the next one or a caller.
        notifiedUpTo = 0;
        lookBegan = callers?.askedAt ?? performance.now();
        try {
          await look(lookAnnounced);
          callers?.resolve();
        } catch (error) {
          if (lookAnnounced) grewUnread(position);
          callers?.reject(error);
        } finally {
          lookBegan = undefined;
          boundPassed = false;
        }
      }
    } finally {
      looking = false;
    }
  }

  /** A notified commit whose events could not be read: the log grew, and anything may have changed. */
  function grewUnread(position: number): void {
    if (position === Number.MAX_SAFE_INTEGER) return;
    if (told !== undefined && position > told) told = position;
    listeners.tell({ last: position });
  }

  function notified(position: number | undefined): void {
    if (position !== undefined) known = Math.max(known, position);
    if (position === undefined) {
      listeners.tell({});
      notifiedUpTo = Number.MAX_SAFE_INTEGER;
    } else if ((told !== undefined && position <= told) || (committing !== undefined && position >= committing.drawnFrom && position <= committing.last)) {
      return;
    } else {
      notifiedUpTo = Math.max(notifiedUpTo, position);
    }
    startLooking();
  }

  function stalled(): StoreUnavailable | undefined {
    if (lookBegan === undefined) return undefined;
    const runningMs = performance.now() - lookBegan;
    if (runningMs < LOOK_BOUND_MS && !boundPassed) return undefined;
    return new StoreUnavailable(`the look for other instances' commits has not been answered for ${Math.round(runningMs)} ms`);
  }

  /** Resolves after a look that began after the call; rejects when that look failed, or took longer than `LOOK_BOUND_MS` to answer. */
  function refresh(): Promise<void> {
    const fault = stalled();
    if (fault !== undefined) {
      // Still asked for, so that a look follows the stalled one at once.
      lookQuietly();
      return Promise.reject(fault);
    }
    lookWanted();
    return waiting!.bounded;
  }

  /** Asks for a look that begins after now; its callers share one bound. */
  function lookWanted(): Promise<void> {
    if (waiting === undefined) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((resolved, rejected) => {
        resolve = resolved;
        reject = rejected;
      });
      const askedAt = performance.now();
      waiting = { promise, bounded: withinLookBound(promise), resolve, reject, askedAt };
    }
    const { promise } = waiting;
    asked += 1;
    startLooking();
    return promise;
  }

  /** A look nobody waits for: a failed one leaves the next to try again. */
  function lookQuietly(): void {
    lookWanted().catch(() => {});
  }

  function withinLookBound(looked: Promise<void>): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (lookBegan !== undefined) boundPassed = true;
        reject(stalled() ?? new StoreUnavailable(`the look for other instances' commits was not answered within ${LOOK_BOUND_MS} ms`));
      }, LOOK_BOUND_MS);
      timer.unref();
    });
    const bounded = Promise.race([looked, late]).finally(() => clearTimeout(timer));
    // Nobody may be left to hear it: a caller of `lookQuietly` only.
    bounded.catch(() => {});
    return bounded;
  }

  async function listen(): Promise<void> {
    if (!options.url || !active || client) return;
    const connection = new pg.Client({
      connectionString: options.url, application_name: 'petstore-log-listener', keepAlive: true, types: SAFE_INTEGER_TYPES,
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs, connectionTimeoutMillis: options.statementTimeoutMs } : {}),
    });
    // A stopped backend cannot enforce its own timeout: the service's timer gives the connection up.
    if (options.statementTimeoutMs) answeringWithin(connection, options.statementTimeoutMs);
    client = connection;
    const lost = (error?: Error) => {
      if (client !== connection) return;
      client = undefined;
      listening = undefined;
      connection.removeAllListeners('notification');
      void connection.end().catch(() => {});
      // Ended without an error event: the server closed it while a look's statement was in flight.
      options.logger?.warn({ reason: error ? connectionFault(error) : 'the connection closed' }, 'the connection listening for commits failed; listening again');
      if (active) {
        relisten = setTimeout(() => void listen(), RELISTEN_MS);
        relisten.unref();
      }
    };
    connection.on('error', lost);
    connection.on('end', () => lost());
    giveUpListening = lost;
    connection.on('notification', (message) => {
      const position = Number(message.payload);
      // Anything but a position (CATALOG_REPLACED): rows changed without events.
      notified(Number.isSafeInteger(position) ? position : undefined);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${LOG_CHANNEL}`);
      if (client === connection) listening = connection;
      // Commits between the last look and LISTEN taking effect were not notified to this connection.
      lookQuietly();
    } catch (error) {
      lost(error as Error);
    }
  }

  async function stop(): Promise<void> {
    active = false;
    if (poll !== undefined) clearInterval(poll);
    if (relisten !== undefined) clearTimeout(relisten);
    poll = undefined;
    const connection = client;
    client = undefined;
    listening = undefined;
    if (connection === undefined) return;
    // A stopped backend never answers the goodbye: closing waits for it a moment, not for as long as it is stopped.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([connection.end().catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, LOOK_BOUND_MS)))]);
    clearTimeout(timer);
  }

  return {
    onCommitted: listeners.onCommitted,
    refresh,
    committed({ drawnFrom, last, changes, types }) {
      known = Math.max(known, last);
      if (told !== undefined && told >= drawnFrom - 1 && told < last) {
        told = last;
        listeners.tell({ last, changes, types });
      } else if (listeners.listening > 0) {
        // Past a gap, or before the first look: another instance's commit may lie between, so a look tells it.
        notified(last);
      }
    },
    committing(positions) {
      committing = positions;
    },
    notified,
    stalled,
    close: stop,
  };
}

/**
 * The looks on the listening connection while it listens (no pool to wait in, no query builder, and
 * no request's query to wait behind), else through the pool.
 */
function listeningLogLooks(db: Kysely<PetStoreDatabase>, listening: () => pg.Client | undefined, unanswered: (error: Error) => void): LogLooks {
  const rowsOf = <Row>(statement: ListeningStatement, values: unknown[]) => translated(postgresSqlDialect, async () => {
    const connection = listening();
    if (connection === undefined) return (await db.executeQuery<Row>(CompiledQuery.raw(statement.text, values))).rows;
    try {
      return (await connection.query<Row & pg.QueryResultRow>({ name: statement.name, text: statement.text, values })).rows;
    } catch (error) {
      // Its 'end' may not come while the backend is stopped: listen again now, on a connection of its own.
      if (error instanceof StatementUnanswered) unanswered(error);
      throw error;
    }
  });
  return {
    readLog: async ({ after, limit }) => (await rowsOf<EventRow>(READ_LOG, [after, limit])).map(storedEventFromRow),
    head: async () => logEndOf(await rowsOf<{ last: number | null }>(LOG_HEAD, [])),
  };
}
