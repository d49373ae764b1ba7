import { sql } from 'kysely';
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { SqlDialect } from '../sql-dialect.ts';
import { compiledForEachLength, compiledOnce } from '../compiled-once.ts';
import type { PetStoreDatabase } from '../schema.ts';

type Db = Kysely<PetStoreDatabase>;

/** A group's row by its owner and name. */
export const groupRow = (on: Db, ownerKeyId: string, name: string) =>
  on.selectFrom('consumer_groups').selectAll().where('owner_key_id', '=', ownerKeyId).where('name', '=', name);

export const count = (select: ExpressionBuilder<PetStoreDatabase, any>) => select.fn.countAll<number | string | bigint>().as('count');

/** The statements every claim or ack of a consumer group runs, each built by Kysely once (`compiledOnce`) and run with new values. */
export function groupStatements(db: Db, dialect: Pick<SqlDialect, 'selectForUpdate'>) {
  const groupHeld = compiledOnce<{ owner: string; name: string }>((value) => dialect.selectForUpdate(groupRow(db, value('owner'), value('name'))));
  const pendingOf = compiledOnce<{ owner: string; name: string; at: string }>((value) => db.selectFrom('consumer_groups as g')
    .selectAll('g')
    .select((select) => [
      // Each from the state's own index ranges: parked rows are never read.
      select.selectFrom('consumer_group_exceptions as e').select((inner) => count(inner))
        .whereRef('e.group_id', '=', 'g.id').where('e.state', 'in', ['ready', 'leased'])
        .as('unsettled'),
      select.exists(
        select.selectFrom('consumer_group_exceptions as e')
          .select('e.position')
          .whereRef('e.group_id', '=', 'g.id')
          .where('e.state', 'in', ['ready', 'leased'])
          .where((where) => where.or([
            where.and([where('e.state', '=', 'ready'), where.or([where('e.not_before', 'is', null), where('e.not_before', '<=', value('at'))])]),
            where.and([where('e.state', '=', 'leased'), where('e.lease_expires_at', '<', value('at'))]),
          ])),
      ).as('due'),
    ])
    .where('g.owner_key_id', '=', value('owner')).where('g.name', '=', value('name')));
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
  const liveByConsumer = compiledOnce<{ groupId: number; at: string }>((value) => db.selectFrom('consumer_group_exceptions')
    .select((select) => ['consumer', count(select), select.fn.min('lease_expires_at').as('soonest')])
    .where('group_id', '=', value('groupId')).where('state', '=', 'leased').where('lease_expires_at', '>=', value('at'))
    .groupBy('consumer'));
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
    .orderBy('position')
    .limit(value('room')));
  const waitingReady = waitingIn('ready');
  const waitingExpired = waitingIn('leased');
  const parkedUpTo = compiledOnce<{ groupId: number; bound: number }>((value) => db
    .selectFrom((inner) => inner.selectFrom('consumer_group_exceptions').select('position').where('group_id', '=', value('groupId')).where('state', '=', 'parked').limit(value('bound')).as('p'))
    .select((select) => count(select)));
  const streamsUnsettled = compiledForEachLength<{ groupId: number; streams: readonly string[] }>((value, length) => db.selectFrom('consumer_group_exceptions')
    .select('stream_id').distinct()
    .where('group_id', '=', value('groupId')).where('stream_id', 'in', Array.from({ length }, (_, index) => value('streams', index))).where('state', 'in', ['ready', 'leased']));
  const cursorMoved = compiledOnce<{ groupId: number; cursor: number }>((value) => db.updateTable('consumer_groups').set({ taken_to: value('cursor') }).where('id', '=', value('groupId')));
  /** Deletes the rows of live leases under one token at these positions, answering the positions deleted. */
  const leasesAcked = compiledForEachLength<{ groupId: number; positions: readonly number[]; token: string; at: string }>((value, length) => db
    .deleteFrom('consumer_group_exceptions')
    .where('group_id', '=', value('groupId')).where('position', 'in', Array.from({ length }, (_, index) => value('positions', index)))
    .where('state', '=', 'leased').where('lease', '=', value('token')).where('lease_expires_at', '>=', value('at'))
    .returning('position'));
  return { groupHeld, pendingOf, seenAgain, spentParked, liveByConsumer, waitingReady, waitingExpired, parkedUpTo, streamsUnsettled, cursorMoved, leasesAcked };
}
