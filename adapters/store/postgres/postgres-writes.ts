import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import { IdempotencyKeyTaken, StoreUnavailable, StreamVersionConflict } from '../../../application/index.ts';
import { registeredAggregates } from '../../../application/index.ts';
import type { Clock, RowChange } from '../../../application/index.ts';
import type { AppendRequest } from '../write/append-plan.ts';
import { BatchRows, appendAll, creationsIn, withIds } from '../write/batch-rows.ts';
import type { BatchReads, BatchReadsWanted, BatchWrites, BatchOutcome, PendingAppend, PendingWrite } from '../write/batch-rows.ts';
import { createCommitBatcher } from '../write/commit-batcher.ts';
import type { BatchWaiting } from '../write/commit-batcher.ts';
import { createSharedTransactions } from '../write/shared-transactions.ts';
import { columnsOf, EVENTS, IDEMPOTENCY_KEYS, postgresInsert, postgresJsonRows, postgresRowsJson, readModelTable } from '../schema.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { translated } from '../sql-dialect.ts';
import { POSTGRES_STREAM_VERSION, postgresStreamVersions } from '../sql-event-log.ts';
import type { SqlWrites } from '../sql-pet-store.ts';
import { APPEND_LOCK, isUnavailability, LOG_CHANNEL, postgresSqlDialect } from './postgres-sql-dialect.ts';
import { prepared } from './postgres-pool.ts';

/** At most this many appends and creations a batch: a bound on one transaction's size and on what a failure makes run again. */
export const BATCH_MOST_APPENDS = 256;

/** The ids a batch drew for its creations, in order, and the appends it built from its writes: what a failure is explained by. */
interface Built {
  /** By sequence. */
  ids: Map<string, number[]>;
  appends: PendingAppend[];
}

/**
 * A batch this instance committed: its events lie in `[drawnFrom, last]`, positions drawn under the
 * append lock and so no other instance's; `changes` are the pets they changed (positions of appends
 * refused in the batch stay unused).
 */
export interface CommittedPositions {
  readonly drawnFrom: number;
  readonly last: number;
  readonly changes: readonly RowChange[];
  readonly types: readonly string[];
}

/** Where a batch's events lie: from its first drawn position to its last event's. */
export type BatchPositions = Pick<CommittedPositions, 'drawnFrom' | 'last'>;

export interface PostgresWrites extends SqlWrites {
  /**
   * Runs `work` in a transaction beside the batches of appends, shared with the others that waited meanwhile
   * (`createSharedTransactions`), answered within the same bound from its arrival as an append (503 past
   * it, and then rolled back rather than committed).
   */
  transaction<T>(work: (db: Kysely<PetStoreDatabase>) => Promise<T>): Promise<T>;
  /** Resolves when every append asked for so far has committed or failed. */
  drain(): Promise<void>;
  /**
   * Whether writes can commit now: the fault that stops them, or undefined. A batch under way for more
   * than a second, or the last batch failing for want of the database (until a batch commits), says
   * they cannot; while faulty, a transaction that takes the append lock and commits, at most once a
   * second, says they can again.
   */
  checkWrites(): Promise<StoreUnavailable | undefined>;
}

export interface PostgresWritesOptions {
  /** Told of each batch this instance committed. */
  readonly committed?: ((batch: CommittedPositions) => void) | undefined;
  /** Told of the positions a batch drew before it commits them, and of `undefined` once the batch is over (`PostgresCommits.committing`). */
  readonly committing?: ((positions: BatchPositions | undefined) => void) | undefined;
  /** How long a write waits from its arrival, whatever is queued before it, before it fails with 503 (milliseconds, 0: no bound). */
  readonly waitBoundMs?: number | undefined;
}

/** At most this often is a faulty store asked whether writes commit again. */
const WRITE_CHECK_EVERY_MS = 1000;

/**
 * Appends on PostgreSQL, committed in batches as on SQLite: the appends asked for while the previous
 * batch commits share one transaction and one flush (`synchronous_commit` stays on; nobody is answered
 * before the commit). A batch costs the same few round trips however many appends it holds: it takes the
 * append lock and draws its positions and one pet id for each creation (whose append it then builds from
 * the id, synchronously), reads what its appends need in one query, executes the append plan of each against those rows in memory (`BatchRows`), then
 * writes everything in one statement.
 * Batches of all instances commit one after the other in the order of their positions, so a reader of
 * `position > n` never skips an event still in flight.
 */
export function createPostgresWrites(db: Kysely<PetStoreDatabase>, clock: Clock, options: PostgresWritesOptions = {}): PostgresWrites {
  const { committed, committing, waitBoundMs = 0 } = options;
  const waitedTooLong = () => new StoreUnavailable(`the database did not take the write within ${waitBoundMs} ms; try again`);
  /** The fault the last batch failed with, until a batch or a write check commits. */
  let fault: StoreUnavailable | undefined;
  let lastCheck: { at: number; done: Promise<void> } | undefined;
  /**
   * Commits the writes waiting now (up to BATCH_MOST_APPENDS) as one batch. When the database refuses
   * the batch's write (a unique key: a writer outside the append lock got there first), each write runs
   * again as a batch of its own, so only the one refused is answered with the failure. Never rejects.
   */
  async function commitBatch(waiting: BatchWaiting): Promise<void> {
    const batch = waiting.takeWrites(BATCH_MOST_APPENDS);
    if (batch.length === 0) return;
    const built: Built = { appends: [], ids: new Map() };
    try {
      answer(await committedBatch(waiting, batch, built));
    } catch (error) {
      if (batch.length === 1 || !isKeyRefusal(error)) {
        const failure = batch.length === 1 ? await explained(error, built.appends[0]?.request) : postgresSqlDialect.translateError(error);
        if (failure instanceof StoreUnavailable) fault = failure;
        for (const write of batch) write.reject(failure);
        return;
      }
      // A creation keeps the id drawn for it: the sequence gave it to this batch.
      const taken = new Map<string, number>();
      for (const write of batch) {
        const alone: Built = { appends: [], ids: new Map() };
        if ('build' in write) {
          const index = taken.get(write.sequence) ?? 0;
          taken.set(write.sequence, index + 1);
          alone.ids.set(write.sequence, [built.ids.get(write.sequence)![index]!]);
        }
        try {
          answer(await committedBatch(waiting, [write], alone));
        } catch (error) {
          write.reject(await explained(error, alone.appends[0]?.request));
        }
      }
    }
  }

  function answer({ outcome, drawnFrom }: { outcome: BatchOutcome; drawnFrom: number }): void {
    fault = undefined;
    if (outcome.last > 0) committed?.({ drawnFrom, last: outcome.last, changes: outcome.changes, types: outcome.types });
    for (const each of outcome.answers) each();
  }

  /**
   * One batch in one transaction: the lock, its positions and the creations' ids (unless `built` holds
   * them from a batch that ran before); the creations' appends built from their ids (into `built`), the
   * reads, the plan in memory, one write. Rolled back instead of committed when one of its writes was
   * refused meanwhile for waiting too long.
   */
  function committedBatch(waiting: BatchWaiting, batch: readonly PendingWrite[], built: Built): Promise<{ outcome: BatchOutcome; drawnFrom: number }> {
    const now = clock.now();
    return translated(postgresSqlDialect, () => db.transaction().execute(async (trx) => {
      const creations = creationsIn(batch);
      // A creation appends one event (a build asking for more has its positions drawn after).
      let events = 0;
      for (const count of creations.values()) events += count;
      for (const write of batch) if ('request' in write) events += eventsIn(write.request);
      // The ids are drawn once: a batch run again alone keeps those drawn for it.
      const sequences = built.ids.size > 0 ? [] : [...creations.keys()];
      const { rows: [drawn] } = await trx.executeQuery<{ position: number | null; ids: (number | null)[] }>(CompiledQuery.raw(LOCK_THEN_DRAW_POSITIONS_AND_IDS, [
        events, sequences.map((sequence) => `${sequence}_ids`), sequences.map((sequence) => creations.get(sequence)!),
      ]));
      const positions = block(drawn!.position, events);
      sequences.forEach((sequence, index) => built.ids.set(sequence, block(drawn!.ids[index]!, creations.get(sequence)!)));
      const rows = new BatchRows((index) => positions[index]!);
      const statements = batchStatements();
      const load = async (needed: BatchReadsWanted | undefined) => {
        if (!needed) return;
        const parameters = [needed.streams, needed.scopes, needed.keys, now.toISOString(), ...statements.tables.map((table) => needed.rows.get(table) ?? [])];
        rows.load((await trx.executeQuery<BatchReads>(CompiledQuery.raw(statements.read, parameters))).rows[0]!);
      };
      // What the writes read (the creations: the streams their decisions read), then the creations built from it.
      await load(rows.toRead(batch));
      const fresh = new Set<string>();
      const withTheirIds = withIds(batch, (sequence, index) => built.ids.get(sequence)![index]!, rows, fresh);
      const { used } = withTheirIds;
      built.appends = withTheirIds.appends;
      let wanted = 0;
      for (const write of built.appends) wanted += eventsIn(write.request);
      if (wanted > positions.length) {
        const more = wanted - positions.length;
        const { rows: [drawnMore] } = await trx.executeQuery<{ position: number | null }>(CompiledQuery.raw(DRAW_POSITIONS, [more]));
        positions.push(...block(drawnMore!.position, more));
      }
      await load(rows.toRead(built.appends, fresh));
      const outcome = appendAll({ rows, failsBatch: isUnavailability }, withTheirIds, now);
      // The notification is delivered when (and only if) the batch commits.
      if (outcome.last > 0) {
        committing?.({ drawnFrom: positions[0]!, last: outcome.last });
        const writes = rows.writes();
        const { rows: [written] } = await trx.executeQuery<{ remembered: number }>(
          CompiledQuery.raw(statements.write, writeBatchParameters(statements.tables, writes, now.toISOString(), String(outcome.last))),
        );
        if (written!.remembered !== writes.remembered.length) throw new RecordKeptElsewhere();
      }
      // The ids of creations their decision refused go back to their sequence: drawn in this transaction,
      // under the append lock, so nobody drew after them (a batch run again alone gives nothing back).
      const unused = sequences.filter((sequence) => (used.get(sequence) ?? 0) < creations.get(sequence)!);
      if (unused.length > 0) {
        await trx.executeQuery(CompiledQuery.raw(GIVE_BACK_IDS, [
          unused.map((sequence) => `${sequence}_ids`), unused.map((sequence) => built.ids.get(sequence)![0]! + (used.get(sequence) ?? 0)),
        ]));
      }
      if (waiting.overdue()) throw waitedTooLong();
      return { outcome, drawnFrom: positions[0] ?? 0 };
    })).finally(() => committing?.(undefined));
  }

  /** A unique key refused the append alone: another writer appended between the batch's read and its write. */
  async function explained(failure: unknown, request: AppendRequest | undefined): Promise<unknown> {
    if (request === undefined) return postgresSqlDialect.translateError(failure);
    const { streams, options } = request;
    if (failure instanceof RecordKeptElsewhere && options?.remember) return new IdempotencyKeyTaken(options.remember.scope, options.remember.key);
    if (!isKeyRefusal(failure)) return postgresSqlDialect.translateError(failure);
    try {
      // The first stream that moved is the one the refusal is about; all at their versions: the read model's row was taken.
      let conflict: StreamVersionConflict | undefined;
      for (const { streamId, expected } of streams) {
        const { rows } = await db.executeQuery<{ version: number | null }>(CompiledQuery.raw(STREAM_VERSION, [streamId]));
        const actual = rows[0]?.version ?? 0;
        if (expected === 'no_stream' ? actual !== 0 : actual !== expected) return new StreamVersionConflict(streamId, expected, actual);
        conflict ??= new StreamVersionConflict(streamId, expected, actual);
      }
      return conflict ?? postgresSqlDialect.translateError(failure);
    } catch (explaining) {
      return postgresSqlDialect.translateError(explaining);
    }
  }

  const committer = createCommitBatcher({ commitBatch, waitBound: waitBoundMs > 0 ? { ms: waitBoundMs, failure: waitedTooLong } : undefined });

  /** A transaction that takes the append lock and commits, between two batches: whether writes commit now. */
  function checkOnce(): Promise<void> {
    return committer.alone(() => translated(postgresSqlDialect, () => db.transaction().execute((trx) => trx.executeQuery(CompiledQuery.raw(TAKE_APPEND_LOCK, [])))))
      .then(() => {
        fault = undefined;
      }, (error: unknown) => {
        const failure = postgresSqlDialect.translateError(error);
        if (failure instanceof StoreUnavailable) fault = failure;
      });
  }

  return {
    append: committer.append,
    create: committer.create,
    drain: committer.drain,
    transaction: createSharedTransactions({
      transaction(leftMs, each) {
        // Bounded from the arrival of its earliest write: refused past that deadline, as by the batcher's own bound.
        const until = performance.now() + leftMs;
        const late = () => performance.now() >= until;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const bounded = new Promise<never>((_, reject) => {
          if (leftMs !== Infinity) timer = setTimeout(() => reject(waitedTooLong()), leftMs);
        });
        const committed = committer.beside((overdue) => db.transaction().execute(async (on) => {
          await each(on);
          // Answered 503 already: what it did is rolled back, not committed behind the caller's back.
          if (overdue() || late()) throw waitedTooLong();
        }));
        return Promise.race([committed, bounded]).finally(() => clearTimeout(timer));
      },
      // The connection failed: nothing more runs on it. Whatever else (the server's refusal, the work's own), its savepoint undoes.
      endsTransaction: (error) => isUnavailability(error) && !/^[0-9A-Z]{5}$/.test(String((error as { code?: unknown }).code)),
      inTurn: (batch) => batch(),
      waitMs: waitBoundMs > 0 ? waitBoundMs : undefined, failure: waitedTooLong, fillTurns: 0,
    }),
    async checkWrites() {
      const stalled = committer.stalled();
      if (stalled || !fault) return stalled ?? fault;
      if (lastCheck === undefined || performance.now() - lastCheck.at >= WRITE_CHECK_EVERY_MS) lastCheck = { at: performance.now(), done: checkOnce() };
      await lastCheck.done;
      return fault;
    },
  };
}

/**
 * The batch's write found a live idempotency record that its read did not see (a writer outside the
 * append lock): the record was not stored, so the batch rolls back and its appends run again alone.
 */
class RecordKeptElsewhere extends Error {
  constructor() {
    super('a live idempotency record appeared between the batch\'s read and its write');
  }
}

/** The database refused the batch's write for a row another writer holds: worth running each append alone. */
function isKeyRefusal(error: unknown): boolean {
  return error instanceof RecordKeptElsewhere || postgresSqlDialect.isUniqueViolation(error, 'events_stream_version_unique')
    || batchStatements().tables.some((table) => postgresSqlDialect.isUniqueViolation(error, `${table}_pkey`));
}

/** How many events an append holds, over all its streams. */
function eventsIn(request: AppendRequest): number {
  let count = 0;
  for (const stream of request.streams) count += stream.events.length;
  return count;
}

/** The `count` values of a block drawn at once (`drawnBlock`), from its first; none when it drew none (`first` null). */
function block(first: number | null, count: number): number[] {
  return first === null ? [] : Array.from({ length: count }, (_, index) => first + index);
}

/**
 * A block of `count` values of `sequence` drawn in one expression, answering its first (null for a
 * count of 0): nextval takes the first, setval moves the sequence past the last. Nothing may draw from
 * the sequence between the two: only batches draw from these, one at a time under the append lock.
 */
function drawnBlock(sequence: string, count: string): string {
  return `case when ${count} > 0 then setval('${sequence}', nextval('${sequence}') + ${count} - 1) - ${count} + 1 end`;
}

const TAKE_APPEND_LOCK = `select pg_advisory_xact_lock(${APPEND_LOCK})`;
/** More positions, under the append lock the batch holds. */
const DRAW_POSITIONS = prepared(`select ${drawnBlock('events_position_seq', '$1::integer')} as position`);
const STREAM_VERSION = prepared(POSTGRES_STREAM_VERSION);

/**
 * Takes the append lock, then draws a block of positions for every event of the batch: a position is
 * drawn only once every smaller one is committed or rolled back. The lock is taken before anything is
 * drawn (the draws read its one row). `events_position_seq` is the sequence of the identity
 * `events.position` (named when migration 0001 created it). Positions of appends the plan refuses stay
 * unused. Then a block of ids from each sequence named in `$2` (`$3` of each), one for each creation of
 * the batch: as on SQLite, a new stream's id is drawn by the batch that appends it, for no statement of its own.
 * One row answers every block's first value.
 */
const LOCK_THEN_DRAW_POSITIONS_AND_IDS = prepared(`with locked as materialized (select pg_advisory_xact_lock(${APPEND_LOCK}))
  select ${drawnBlock('events_position_seq', '$1::integer')} as position,
    (select coalesce(json_agg(case when n > 0 then setval(name::regclass, nextval(name::regclass) + n - 1) - n + 1 end order by at), '[]')
      from unnest($2::text[], $3::integer[]) with ordinality as wanted(name, n, at)) as ids
  from locked`);

/** Sets each sequence of `$1` back so that its next value is that of `$2`, under the append lock of the batch that drew past it. */
const GIVE_BACK_IDS = prepared('select setval(name::regclass, next, false) from unnest($1::text[], $2::bigint[]) as back(name, next)');

/** The read and the write of a batch, built from the read-model tables of the aggregates registered. */
interface BatchStatements {
  /** The read-model tables, in the order their parameters come. */
  readonly tables: readonly string[];
  readonly read: string;
  readonly write: string;
}

let statementsFor: { readonly aggregates: number; readonly statements: BatchStatements } | undefined;

function batchStatements(): BatchStatements {
  const aggregates = registeredAggregates();
  if (statementsFor?.aggregates !== aggregates.length) {
    const tables = [...new Set(aggregates.flatMap((aggregate) => aggregate.readModel ? [aggregate.readModel.table] : []))];
    statementsFor = { aggregates: aggregates.length, statements: { tables, read: prepared(readBatchSql(tables)), write: prepared(writeBatchSql(tables)) } };
  }
  return statementsFor.statements;
}

/** What the batch's appends read (`BatchReads`), in one query after the lock: `$5` on, the ids wanted of each table. */
function readBatchSql(tables: readonly string[]): string {
  const rows = tables.map((table, index) => `'${table}', (select coalesce(json_agg(${table}), '[]') from ${table} where id = any($${5 + index}::bigint[]))`);
  return `select
  (select coalesce(json_agg(json_build_array(stream_id, version)), '[]') from (
    ${postgresStreamVersions('$1')}) as streams) as versions,
  json_build_object(${rows.join(', ')}) as rows,
  (select coalesce(json_agg(json_build_array(scope, idempotency_key)), '[]') from idempotency_keys
    where (scope, idempotency_key) in (select * from unnest($2::text[], $3::text[])) and expires_at > $4) as remembered`;
}

/**
 * The batch's writes in one statement, each table's rows one JSON parameter (`postgresJsonRows`): the
 * events at the positions drawn, the idempotency records (replacing expired ones), the notification,
 * then, `$6` on, each read-model table's new rows and changed ones. Answers how many records it
 * stored: fewer than the batch's if a live one was in the way.
 */
function writeBatchSql(tables: readonly string[]): string {
  const readModels = tables.map((name, index) => {
    const table = readModelTable(name);
    const changedColumns = columnsOf(table).filter((column) => column !== 'id');
    return `new_${name} as (
    ${postgresInsert(table, 6 + 2 * index)}
  ), changed_${name} as (
    update ${name} set ${changedColumns.map((column) => `${column} = changed.${column}`).join(', ')}
    from (${postgresJsonRows(table, 7 + 2 * index)}) as changed
    where ${name}.id = changed.id
  ), `;
  });
  return `with ${readModels.join('')}appended as (
    ${postgresInsert(EVENTS, 1)}
  ), remembered as (
    ${postgresInsert(IDEMPOTENCY_KEYS, 2)}
    on conflict (scope, idempotency_key) do update
      set fingerprint = excluded.fingerprint, answer = excluded.answer, expires_at = excluded.expires_at
      where idempotency_keys.expires_at <= $3
    returning 1
  )
  select pg_notify($4, $5), (select count(*) from remembered)::integer as remembered`;
}

/** The parameters of a batch's write, in the order `writeBatchSql` numbers them: each table's rows as one JSON text. */
function writeBatchParameters(tables: readonly string[], { created, changed, events, remembered }: BatchWrites, now: string, last: string): unknown[] {
  return [
    postgresRowsJson(events), postgresRowsJson(remembered), now, LOG_CHANNEL, last,
    ...tables.flatMap((table) => [postgresRowsJson(created.get(table) ?? []), postgresRowsJson(changed.get(table) ?? [])]),
  ];
}
