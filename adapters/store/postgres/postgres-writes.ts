import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import { IdempotencyKeyTaken, StoreUnavailable, StreamVersionConflict } from '../../../application/index.ts';
import type { Clock, PetChange } from '../../../application/index.ts';
import type { AppendRequest } from '../append-plan.ts';
import { GroupRows, appendAll, creationsIn, withIds } from '../group-rows.ts';
import type { GroupReads, GroupWrites, GroupOutcome, PendingAppend, PendingWrite } from '../group-rows.ts';
import { createGroupCommitter } from '../group-committer.ts';
import type { GroupWaiting } from '../group-committer.ts';
import { columnsOf, EVENTS, IDEMPOTENCY_KEYS, PETS, postgresInsert, postgresJsonRows, postgresRowsJson } from '../schema.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { translated } from '../sql-dialect.ts';
import { POSTGRES_STREAM_VERSION, postgresStreamVersions } from '../sql-event-log.ts';
import type { SqlWrites } from '../sql-pet-store.ts';
import { APPEND_LOCK, isUnavailability, LOG_CHANNEL, postgresSqlDialect } from './postgres-sql-dialect.ts';
import { prepared } from './postgres-pool.ts';

/** At most this many appends and creations a group: a bound on one transaction's size and on what a failure makes run again. */
export const GROUP_MOST_APPENDS = 256;

/** The ids a group drew for its creations, in order, and the appends it built from its writes: what a failure is explained by. */
interface Built {
  ids: number[];
  appends: PendingAppend[];
}

/**
 * A group this instance committed: its events lie in `[drawnFrom, last]`, positions drawn under the
 * append lock and so no other instance's; `changes` are the pets they changed (positions of appends
 * refused in the group stay unused).
 */
export interface CommittedPositions {
  readonly drawnFrom: number;
  readonly last: number;
  readonly changes: readonly PetChange[];
}

/** Where a group's events lie: from its first drawn position to its last event's. */
export type GroupPositions = Pick<CommittedPositions, 'drawnFrom' | 'last'>;

export interface PostgresWrites extends SqlWrites {
  /** Resolves when every append asked for so far has committed or failed. */
  drain(): Promise<void>;
  /**
   * Whether writes can commit now: the fault that stops them, or undefined. A group under way for more
   * than a second, or the last group failing for want of the database (until a group commits), says
   * they cannot; while faulty, a transaction that takes the append lock and commits, at most once a
   * second, says they can again.
   */
  checkWrites(): Promise<StoreUnavailable | undefined>;
}

export interface PostgresWritesOptions {
  /** Told of each group this instance committed. */
  readonly committed?: ((group: CommittedPositions) => void) | undefined;
  /** Told of the positions a group drew before it commits them, and of `undefined` once the group is over (`PostgresCommits.committing`). */
  readonly committing?: ((positions: GroupPositions | undefined) => void) | undefined;
  /** How long a write waits from its arrival, whatever is queued before it, before it fails with 503 (milliseconds, 0: no bound). */
  readonly waitBoundMs?: number | undefined;
}

/** At most this often is a faulty store asked whether writes commit again. */
const WRITE_CHECK_EVERY_MS = 1000;

/**
 * Appends on PostgreSQL, committed in groups as on SQLite: the appends asked for while the previous
 * group commits share one transaction and one flush (`synchronous_commit` stays on; nobody is answered
 * before the commit). A group costs the same few round trips however many appends it holds: it takes the
 * append lock and draws its positions and one pet id for each creation (whose append it then builds from
 * the id, synchronously), reads what its appends need in one query, executes the append plan of each against those rows in memory (`GroupRows`), then
 * writes everything in one statement.
 * Groups of all instances commit one after the other in the order of their positions, so a reader of
 * `position > n` never skips an event still in flight.
 */
export function createPostgresWrites(db: Kysely<PetStoreDatabase>, clock: Clock, options: PostgresWritesOptions = {}): PostgresWrites {
  const { committed, committing, waitBoundMs = 0 } = options;
  const waitedTooLong = () => new StoreUnavailable(`the database did not take the write within ${waitBoundMs} ms; try again`);
  /** The fault the last group failed with, until a group or a write check commits. */
  let fault: StoreUnavailable | undefined;
  let lastCheck: { at: number; done: Promise<void> } | undefined;
  /**
   * Commits the writes waiting now (up to GROUP_MOST_APPENDS) as one group. When the database refuses
   * the group's write (a unique key: a writer outside the append lock got there first), each write runs
   * again as a group of its own, so only the one refused is answered with the failure. Never rejects.
   */
  async function commitGroup(waiting: GroupWaiting): Promise<void> {
    const batch = waiting.takeWrites(GROUP_MOST_APPENDS);
    if (batch.length === 0) return;
    const built: Built = { appends: [], ids: [] };
    try {
      answer(await committedGroup(waiting, batch, built));
    } catch (error) {
      if (batch.length === 1 || !isKeyRefusal(error)) {
        const failure = batch.length === 1 ? await explained(error, built.appends[0]?.request) : postgresSqlDialect.translateError(error);
        if (failure instanceof StoreUnavailable) fault = failure;
        for (const write of batch) write.reject(failure);
        return;
      }
      // A creation keeps the id drawn for it: the sequence gave it to this group.
      let creation = 0;
      for (const write of batch) {
        const alone: Built = { appends: [], ids: 'build' in write ? built.ids.slice(creation, (creation += 1)) : [] };
        try {
          answer(await committedGroup(waiting, [write], alone));
        } catch (error) {
          write.reject(await explained(error, alone.appends[0]?.request));
        }
      }
    }
  }

  function answer({ outcome, drawnFrom }: { outcome: GroupOutcome; drawnFrom: number }): void {
    fault = undefined;
    if (outcome.last > 0) committed?.({ drawnFrom, last: outcome.last, changes: outcome.changes });
    for (const each of outcome.answers) each();
  }

  /**
   * One group in one transaction: the lock, its positions and the creations' ids (unless `built` holds
   * them from a group that ran before); the creations' appends built from their ids (into `built`), the
   * reads, the plan in memory, one write. Rolled back instead of committed when one of its writes was
   * refused meanwhile for waiting too long.
   */
  function committedGroup(waiting: GroupWaiting, batch: readonly PendingWrite[], built: Built): Promise<{ outcome: GroupOutcome; drawnFrom: number }> {
    const now = clock.now();
    return translated(postgresSqlDialect, () => db.transaction().execute(async (trx) => {
      const creations = creationsIn(batch);
      // A creation appends one event (a build asking for more has its positions drawn after).
      let events = creations;
      for (const write of batch) if ('request' in write) events += write.request.events.length;
      const idsWanted = built.ids.length === creations ? 0 : creations;
      const { rows: [drawn] } = await trx.executeQuery<{ position: number | null; id: number | null }>(CompiledQuery.raw(LOCK_THEN_DRAW_POSITIONS_AND_IDS, [events, idsWanted]));
      const positions = block(drawn!.position, events);
      if (idsWanted > 0) built.ids = block(drawn!.id, idsWanted);
      const fresh = new Set<string>();
      built.appends = withIds(batch, (index) => built.ids[index]!, fresh);
      let wanted = 0;
      for (const write of built.appends) wanted += write.request.events.length;
      if (wanted > positions.length) {
        const more = wanted - positions.length;
        const { rows: [drawnMore] } = await trx.executeQuery<{ position: number | null }>(CompiledQuery.raw(DRAW_POSITIONS, [more]));
        positions.push(...block(drawnMore!.position, more));
      }
      const group = new GroupRows((index) => positions[index]!);
      const needed = group.toRead(built.appends, fresh);
      if (needed) {
        const parameters = [needed.streams, needed.petIds, needed.scopes, needed.keys, now.toISOString()];
        group.load((await trx.executeQuery<GroupReads>(CompiledQuery.raw(READ_GROUP, parameters))).rows[0]!);
      }
      const outcome = appendAll({ rows: group, failsGroup: isUnavailability }, built.appends, now);
      // The notification is delivered when (and only if) the group commits.
      if (outcome.last > 0) {
        committing?.({ drawnFrom: positions[0]!, last: outcome.last });
        const writes = group.writes();
        const { rows } = await trx.executeQuery<{ remembered: number }>(CompiledQuery.raw(WRITE_GROUP, writeGroupParameters(writes, now.toISOString(), String(outcome.last))));
        if (rows[0]!.remembered !== writes.remembered.length) throw new RecordKeptElsewhere();
      }
      if (waiting.overdue()) throw waitedTooLong();
      return { outcome, drawnFrom: positions[0] ?? 0 };
    })).finally(() => committing?.(undefined));
  }

  /** A unique key refused the append alone: another writer appended between the group's read and its write. */
  async function explained(failure: unknown, request: AppendRequest | undefined): Promise<unknown> {
    if (request === undefined) return postgresSqlDialect.translateError(failure);
    const { streamId, expected, options } = request;
    if (failure instanceof RecordKeptElsewhere && options.remember) return new IdempotencyKeyTaken(options.remember.scope, options.remember.key);
    if (!isKeyRefusal(failure)) return postgresSqlDialect.translateError(failure);
    try {
      const { rows } = await db.executeQuery<{ version: number | null }>(CompiledQuery.raw(STREAM_VERSION, [streamId]));
      return new StreamVersionConflict(streamId, expected, rows[0]?.version ?? 0);
    } catch (explaining) {
      return postgresSqlDialect.translateError(explaining);
    }
  }

  const committer = createGroupCommitter({ commitGroup, waitBound: waitBoundMs > 0 ? { ms: waitBoundMs, failure: waitedTooLong } : undefined });

  /** A transaction that takes the append lock and commits, between two groups: whether writes commit now. */
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
 * The group's write found a live idempotency record that its read did not see (a writer outside the
 * append lock): the record was not stored, so the group rolls back and its appends run again alone.
 */
class RecordKeptElsewhere extends Error {
  constructor() {
    super('a live idempotency record appeared between the group\'s read and its write');
  }
}

/** The database refused the group's write for a row another writer holds: worth running each append alone. */
function isKeyRefusal(error: unknown): boolean {
  return error instanceof RecordKeptElsewhere
    || postgresSqlDialect.isUniqueViolation(error, 'events_stream_version_unique') || postgresSqlDialect.isUniqueViolation(error, 'pets_pkey');
}

/** The `count` values of a block drawn at once (`drawnBlock`), from its first; none when it drew none (`first` null). */
function block(first: number | null, count: number): number[] {
  return first === null ? [] : Array.from({ length: count }, (_, index) => first + index);
}

/**
 * A block of `count` values of `sequence` drawn in one expression, answering its first (null for a
 * count of 0): nextval takes the first, setval moves the sequence past the last. Nothing may draw from
 * the sequence between the two: only groups draw from these, one at a time under the append lock.
 */
function drawnBlock(sequence: string, count: string): string {
  return `case when ${count} > 0 then setval('${sequence}', nextval('${sequence}') + ${count} - 1) - ${count} + 1 end`;
}

const TAKE_APPEND_LOCK = `select pg_advisory_xact_lock(${APPEND_LOCK})`;
/** More positions, under the append lock the group holds. */
const DRAW_POSITIONS = prepared(`select ${drawnBlock('events_position_seq', '$1::integer')} as position`);
const STREAM_VERSION = prepared(POSTGRES_STREAM_VERSION);

/**
 * Takes the append lock, then draws a block of positions for every event of the group: a position is
 * drawn only once every smaller one is committed or rolled back. The lock is taken before anything is
 * drawn (the draws read its one row). `events_position_seq` is the sequence of the identity
 * `events.position` (named when migration 0001 created it). Positions of appends the plan refuses stay
 * unused. Then a block of pet ids, one for each creation of the group: as on SQLite, a new pet's id is
 * drawn by the group that appends it, for no statement of its own. One row answers both blocks' first values.
 */
const LOCK_THEN_DRAW_POSITIONS_AND_IDS = prepared(`with locked as materialized (select pg_advisory_xact_lock(${APPEND_LOCK}))
  select ${drawnBlock('events_position_seq', '$1::integer')} as position, ${drawnBlock('pet_ids', '$2::integer')} as id from locked`);

/** What the group's appends read (`GroupReads`), in one query after the lock. */
const READ_GROUP = prepared(`select
  (select coalesce(json_agg(json_build_array(stream_id, version)), '[]') from (
    ${postgresStreamVersions('$1')}) as streams) as versions,
  (select coalesce(json_agg(pets), '[]') from pets where id = any($2::bigint[])) as pets,
  (select coalesce(json_agg(json_build_array(scope, idempotency_key)), '[]') from idempotency_keys
    where (scope, idempotency_key) in (select * from unnest($3::text[], $4::text[])) and expires_at > $5) as remembered`);

/** The columns a changed pet's row rewrites: all but its key. */
const CHANGED_PET_COLUMNS = columnsOf(PETS).filter((column) => column !== 'id');

/**
 * The group's writes in one statement, each table's rows one JSON parameter (`postgresJsonRows`): new rows of `pets`,
 * changed ones, the events at the positions drawn, the idempotency records (replacing expired ones),
 * and the notification. Answers how many records it stored: fewer than the group's if a live one was in the way.
 */
const WRITE_GROUP = prepared(writeGroupSql());

function writeGroupSql(): string {
  return `with new_pets as (
    ${postgresInsert(PETS, 1)}
  ), changed_pets as (
    update pets set ${CHANGED_PET_COLUMNS.map((column) => `${column} = changed.${column}`).join(', ')}
    from (${postgresJsonRows(PETS, 2)}) as changed
    where pets.id = changed.id
  ), appended as (
    ${postgresInsert(EVENTS, 3)}
  ), remembered as (
    ${postgresInsert(IDEMPOTENCY_KEYS, 4)}
    on conflict (scope, idempotency_key) do update
      set fingerprint = excluded.fingerprint, pet = excluded.pet, expires_at = excluded.expires_at
      where idempotency_keys.expires_at <= $5
    returning 1
  )
  select pg_notify($6, $7), (select count(*) from remembered)::integer as remembered`;
}

/** The parameters of `WRITE_GROUP`, in the order `writeGroupSql` numbers them: each table's rows as one JSON text. */
function writeGroupParameters({ createdPets, changedPets, events, remembered }: GroupWrites, now: string, last: string): unknown[] {
  return [postgresRowsJson(createdPets), postgresRowsJson(changedPets), postgresRowsJson(events), postgresRowsJson(remembered), now, LOG_CHANNEL, last];
}
