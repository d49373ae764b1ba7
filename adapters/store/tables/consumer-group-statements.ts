import { sql } from 'kysely';
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { PetEvent } from '../../../domain/index.ts';
import type { ConsumerGroup, GroupStart } from '../../../application/index.ts';
import type { SqlDialect } from '../sql-dialect.ts';
import { compiledForEachLength, compiledOnce } from '../compiled-once.ts';
import type { ConsumerGroupsTable, PetStoreDatabase } from '../schema.ts';

type Db = Kysely<PetStoreDatabase>;

/** A group's row by its owner and name. */
export const groupRow = (on: Db, ownerKeyId: string, name: string) =>
  on.selectFrom('consumer_groups').selectAll().where('owner_key_id', '=', ownerKeyId).where('name', '=', name);

/** A group as its row holds it. */
export function groupFromRow(row: Omit<Selectable<ConsumerGroupsTable>, 'id'>): ConsumerGroup {
  return {
    ownerKeyId: row.owner_key_id,
    name: row.name,
    ackTimeoutMs: row.ack_timeout_ms,
    maxDeliveries: row.max_deliveries,
    start: startFromText(row.start),
    ...(row.types === null ? {} : { types: JSON.parse(row.types) as PetEvent['type'][] }),
    createdAt: row.created_at,
    takenTo: Number(row.taken_to),
  };
}

function startFromText(text: string): GroupStart {
  return text === 'beginning' || text === 'end' ? text : Number(text);
}

export const count = (select: ExpressionBuilder<PetStoreDatabase, any>) => select.fn.countAll<number | string | bigint>().as('count');

/** The columns of a group's event row, in the order `rangeEvents` answers them. */
export const EXCEPTION_COLUMNS = [
  'group_id', 'position', 'stream_id', 'state', 'deliveries', 'not_before', 'lease', 'consumer', 'lease_expires_at', 'reason', 'parked_at',
] as const;

/**
 * The events of leases kept as ranges (`consumer_group_leases`), one row an event as `consumer_group_exceptions`
 * would hold it (`EXCEPTION_COLUMNS`): leased on their first delivery. A range holds every event of the log between its ends.
 */
export const rangeEvents = (on: Db) => on.selectFrom('consumer_group_leases as r')
  .innerJoin('events as ev', (join) => join.onRef('ev.position', '>=', 'r.from_position').onRef('ev.position', '<=', 'r.to_position'))
  .select([
    'r.group_id', 'ev.position', 'ev.stream_id', sql<string>`'leased'`.as('state'), sql<number>`1`.as('deliveries'), sql<string | null>`cast(null as text)`.as('not_before'),
    'r.lease', 'r.consumer', 'r.lease_expires_at', sql<string | null>`cast(null as text)`.as('reason'), sql<string | null>`cast(null as text)`.as('parked_at'),
  ]);

/** A group's event rows, those of its ranged leases included: what reads of its state go through (`consumer_group_exceptions` alone misses the ranges). */
export const eventRows = (on: Db) => on.selectFrom((inner) => inner.selectFrom('consumer_group_exceptions').select([...EXCEPTION_COLUMNS])
  .unionAll(rangeEvents(on)).as('consumer_group_exceptions'));

/** The statements every claim or ack of a consumer group runs, each built by Kysely once (`compiledOnce`) and run with new values. */
export function groupStatements(db: Db, dialect: Pick<SqlDialect, 'selectForUpdate'>) {
  // A group's unsettled events one a row (from the state's own index ranges: parked rows are never read), and in its ranged leases.
  const unsettledRows = (select: ExpressionBuilder<PetStoreDatabase, 'consumer_groups'>) => select.selectFrom('consumer_group_exceptions as e')
    .select((inner) => count(inner)).whereRef('e.group_id', '=', 'consumer_groups.id').where('e.state', 'in', ['ready', 'leased']);
  const rangedEvents = (select: ExpressionBuilder<PetStoreDatabase, 'consumer_groups'>) => select.selectFrom('consumer_group_leases as r')
    .select((inner) => inner.fn.coalesce(inner.fn.sum<number | string>('r.events'), sql<number>`0`).as('events')).whereRef('r.group_id', '=', 'consumer_groups.id');
  /**
   * The group's row, locked; whether any of its ranged leases expired before `at`; whether it holds any
   * event row (leased one a row, waiting or parked): a group drained in order holds none; and, for a claim
   * (`forClaim`), how many events it holds unsettled (waiting or leased) and when its consumer was last
   * seen (null: not shown), in the same read.
   */
  const groupLocked = (forClaim: boolean) => compiledOnce<{ owner: string; name: string; at: string; consumer: string }>((value) => dialect.selectForUpdate(groupRow(db, value('owner'), value('name'))
    .select((select) => [
      select.exists(select.selectFrom('consumer_group_leases as r').select('r.from_position')
        .whereRef('r.group_id', '=', 'consumer_groups.id').where('r.lease_expires_at', '<', value('at'))).as('rangesExpired'),
      select.exists(select.selectFrom('consumer_group_exceptions as e').select('e.position').whereRef('e.group_id', '=', 'consumer_groups.id')).as('eventRows'),
      ...(forClaim
        ? [
          sql<number>`${unsettledRows(select)} + ${rangedEvents(select)}`.as('unsettled'),
          select.selectFrom('consumer_group_consumers as c').select('c.last_seen_at')
            .where('c.owner_key_id', '=', value('owner')).where('c.group_name', '=', value('name')).where('c.consumer', '=', value('consumer')).as('seenAt'),
        ]
        : []),
    ])));
  const groupHeld = groupLocked(false);
  const groupHeldForClaim = groupLocked(true);
  const pendingOf = compiledOnce<{ owner: string; name: string; at: string }>((value) => db.selectFrom('consumer_groups')
    .selectAll('consumer_groups')
    .select((select) => [
      unsettledRows(select).as('unsettled'),
      select.exists(
        select.selectFrom('consumer_group_exceptions as e')
          .select('e.position')
          .whereRef('e.group_id', '=', 'consumer_groups.id')
          .where('e.state', 'in', ['ready', 'leased'])
          .where((where) => where.or([
            where.and([where('e.state', '=', 'ready'), where.or([where('e.not_before', 'is', null), where('e.not_before', '<=', value('at'))])]),
            where.and([where('e.state', '=', 'leased'), where('e.lease_expires_at', '<', value('at'))]),
          ])),
      ).as('due'),
      rangedEvents(select).as('ranged'),
      select.exists(
        select.selectFrom('consumer_group_leases as r').select('r.from_position').whereRef('r.group_id', '=', 'consumer_groups.id').where('r.lease_expires_at', '<', value('at')),
      ).as('rangeDue'),
    ])
    .where('owner_key_id', '=', value('owner')).where('name', '=', value('name')));
  const seenAgain = compiledOnce<{ owner: string; name: string; consumer: string; at: string }>((value) => db.updateTable('consumer_group_consumers')
    .set({ last_seen_at: value('at') }).where('owner_key_id', '=', value('owner')).where('group_name', '=', value('name')).where('consumer', '=', value('consumer')));
  const spentParked = compiledOnce<{ groupId: number; at: string; maxDeliveries: number }>((value) => db
    .updateTable('consumer_group_exceptions')
    .set((set) => ({
      state: 'parked', reason: sql<string>`'lease expired on delivery ' || cast(${set.ref('deliveries')} as text)`, parked_at: set.ref('lease_expires_at'),
      lease: null, consumer: null, lease_expires_at: null,
    }))
    .where('group_id', '=', value('groupId'))
    .where((where) => where.and([where('state', '=', 'leased'), where('lease_expires_at', '<', value('at')), where('deliveries', '>=', value('maxDeliveries'))])));
  /** Each consumer's live leases, events leased one a row and by ranges together: how many, and when the soonest expires. */
  const liveByConsumer = compiledOnce<{ groupId: number; at: string }>((value) => db.selectFrom((inner) => inner.selectFrom('consumer_group_exceptions')
    .select((select) => ['consumer', count(select), select.fn.min('lease_expires_at').as('soonest')])
    .where('group_id', '=', value('groupId')).where('state', '=', 'leased').where('lease_expires_at', '>=', value('at'))
    .groupBy('consumer')
    .unionAll(db.selectFrom('consumer_group_leases')
      .select((select) => ['consumer', select.fn.sum<number | string>('events').as('count'), select.fn.min('lease_expires_at').as('soonest')])
      .where('group_id', '=', value('groupId')).where('lease_expires_at', '>=', value('at'))
      .groupBy('consumer'))
    .as('live'))
    .select((select) => ['live.consumer', select.fn.sum<number | string>('live.count').as('count'), select.fn.min('live.soonest').as('soonest')])
    .groupBy('live.consumer'));
  /**
   * Waiting events in one state (ready, or leased with the lease expired), read along the state's own index
   * in position order (parked rows are never read), each only if the earliest unsettled of its pet.
   */
  const waitingIn = (state: 'ready' | 'leased') => compiledOnce<{ groupId: number; at: string; room: number }>((value) => db.selectFrom('consumer_group_exceptions')
    .select(['position', 'deliveries'])
    .where('group_id', '=', value('groupId')).where('state', '=', state)
    .where((where) => (state === 'ready'
      ? where.or([where('not_before', 'is', null), where('not_before', '<=', value('at'))])
      : where('lease_expires_at', '<', value('at'))))
    .where(({ not, exists, selectFrom }) => not(exists(
      selectFrom('consumer_group_exceptions as p')
        .select('p.position')
        .whereRef('p.group_id', '=', 'consumer_group_exceptions.group_id').whereRef('p.stream_id', '=', 'consumer_group_exceptions.stream_id')
        .whereRef('p.position', '<', 'consumer_group_exceptions.position')
        .where('p.state', 'in', ['ready', 'leased']),
    )))
    .where(({ not, exists, selectFrom }) => not(exists(
      selectFrom('events as ev')
        .innerJoin('consumer_group_leases as r', (join) => join.onRef('ev.position', '>=', 'r.from_position').onRef('ev.position', '<=', 'r.to_position'))
        .select('ev.position')
        .whereRef('r.group_id', '=', 'consumer_group_exceptions.group_id').whereRef('ev.stream_id', '=', 'consumer_group_exceptions.stream_id')
        .whereRef('ev.position', '<', 'consumer_group_exceptions.position'),
    )))
    .orderBy('position')
    .limit(value('room')));
  const waitingReady = waitingIn('ready');
  const waitingExpired = waitingIn('leased');
  const parkedUpTo = compiledOnce<{ groupId: number; bound: number }>((value) => db
    .selectFrom((inner) => inner.selectFrom('consumer_group_exceptions').select('position').where('group_id', '=', value('groupId')).where('state', '=', 'parked').limit(value('bound')).as('p'))
    .select((select) => count(select)));
  /** Which of these pets have an unsettled event in the group, one of a row or of a ranged lease (a pet may come more than once). */
  const streamsUnsettled = compiledForEachLength<{ groupId: number; streams: readonly string[] }>((value, length) => {
    const streams = () => Array.from({ length }, (_, index) => value('streams', index));
    return db.selectFrom('consumer_group_exceptions')
      .select('stream_id')
      .where('group_id', '=', value('groupId')).where('stream_id', 'in', streams()).where('state', 'in', ['ready', 'leased'])
      .unionAll(db.selectFrom('events as ev')
        .select('ev.stream_id')
        .where('ev.stream_id', 'in', streams())
        .where(({ exists, selectFrom }) => exists(selectFrom('consumer_group_leases as r').select('r.from_position')
          .where('r.group_id', '=', value('groupId')).whereRef('r.from_position', '<=', 'ev.position').whereRef('r.to_position', '>=', 'ev.position'))));
  });
  /** Turns ranged leases whose lease expired into a row an event (an expired lease is handed out again or parked one event at a time). */
  const expiredRangesOpened = compiledOnce<{ groupId: number; at: string }>((value) => db.insertInto('consumer_group_exceptions').columns([...EXCEPTION_COLUMNS])
    .expression(rangeEvents(db).where('r.group_id', '=', value('groupId')).where('r.lease_expires_at', '<', value('at'))));
  const expiredRangesDropped = compiledOnce<{ groupId: number; at: string }>((value) => db.deleteFrom('consumer_group_leases')
    .where('group_id', '=', value('groupId')).where('lease_expires_at', '<', value('at')));
  /** A token's live ranged leases. */
  const rangesOf = compiledOnce<{ groupId: number; token: string; at: string }>((value) => db.selectFrom('consumer_group_leases')
    .select(['from_position', 'to_position', 'events'])
    .where('group_id', '=', value('groupId')).where('lease', '=', value('token')).where('lease_expires_at', '>=', value('at')));
  /**
   * Deletes the token's live range from `from` to `to` when it has no gap (`events`, asked as `to - from + 1`):
   * the positions named are then exactly its events. An ack of a whole claim in one statement.
   */
  const wholeRangeAcked = compiledOnce<{ groupId: number; token: string; from: number; to: number; events: number; at: string }>((value) => db.deleteFrom('consumer_group_leases')
    .where('group_id', '=', value('groupId')).where('from_position', '=', value('from')).where('to_position', '=', value('to'))
    .where('events', '=', value('events')).where('lease', '=', value('token')).where('lease_expires_at', '>=', value('at')));
  const rangeAcked = compiledOnce<{ groupId: number; from: number }>((value) => db.deleteFrom('consumer_group_leases')
    .where('group_id', '=', value('groupId')).where('from_position', '=', value('from')));
  const cursorMoved = compiledOnce<{ groupId: number; cursor: number }>((value) => db.updateTable('consumer_groups').set({ taken_to: value('cursor') }).where('id', '=', value('groupId')));
  /** Deletes the rows of live leases under one token at these positions, answering the positions deleted. */
  const leasesAcked = compiledForEachLength<{ groupId: number; positions: readonly number[]; token: string; at: string }>((value, length) => db
    .deleteFrom('consumer_group_exceptions')
    .where('group_id', '=', value('groupId')).where('position', 'in', Array.from({ length }, (_, index) => value('positions', index)))
    .where('state', '=', 'leased').where('lease', '=', value('token')).where('lease_expires_at', '>=', value('at'))
    .returning('position'));
  return {
    groupHeld, groupHeldForClaim, pendingOf, seenAgain, spentParked, liveByConsumer, waitingReady, waitingExpired, parkedUpTo, streamsUnsettled, cursorMoved, leasesAcked,
    expiredRangesOpened, expiredRangesDropped, rangesOf, wholeRangeAcked, rangeAcked,
  };
}
