import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { PetEvent } from '../../../domain/index.ts';
import { consumersWindowMs, GROUP_LIMITS, GroupLimitReached, sameGroupSettings } from '../../../application/index.ts';
import type { ConsumerGroup, ConsumerGroups, GroupStart, LeaseOutcome, StoredEvent } from '../../../application/index.ts';
import { translated } from '../sql-dialect.ts';
import { CONSUMER_GROUP_EVENTS } from '../schema.ts';
import type { ConsumerGroupEventsTable, ConsumerGroupsTable, PetStoreDatabase } from '../schema.ts';
import type { SqlPetStore } from '../sql-pet-store.ts';

type Db = Kysely<PetStoreDatabase>;

/**
 * Consumer groups in `consumer_groups` and `consumer_group_events`, the same queries on SQLite and PostgreSQL.
 * Every change runs in one transaction that holds the group alone: on SQLite the store's writer (its write
 * lock, beside the groups of appends, running only these statements), on PostgreSQL the group's row locked
 * `FOR UPDATE`, so claims, acks and nacks of one group take turns across instances.
 */
export function createSqlConsumerGroups(
  store: Pick<SqlPetStore, 'db' | 'dialect' | 'writeOutsideLog'>,
  limits: {
    readonly inFlightPerGroup: number; readonly inFlightPerConsumer: number; readonly consumersPerGroup?: number; readonly parkedPerGroup?: number;
  } = GROUP_LIMITS,
): ConsumerGroups {
  const { db, dialect } = store;
  const run = <T>(work: () => Promise<T>) => translated(dialect, work);
  const transaction = <T>(work: (on: Db) => Promise<T>): Promise<T> =>
    run(() => (store.writeOutsideLog ? store.writeOutsideLog(work) : db.transaction().execute(work)));
  /** `work` with the group held alone; undefined when there is no such group. */
  const holding = <T>(ownerKeyId: string, name: string, work: (on: Db, group: ConsumerGroup) => Promise<T>): Promise<T | undefined> =>
    transaction(async (on) => {
      const query = on.selectFrom('consumer_groups').selectAll().where('owner_key_id', '=', ownerKeyId).where('name', '=', name);
      const row = await dialect.selectForUpdate(query).executeTakeFirst();
      return row ? work(on, groupFromRow(row)) : undefined;
    });
  const events = (on: Db, ownerKeyId: string, name: string) =>
    on.selectFrom('consumer_group_events').where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name);
  const count = (select: ExpressionBuilder<PetStoreDatabase, any>) => select.fn.countAll<number | string | bigint>().as('count');
  /** The leases among `leases` live at `now` (state `leased`, not expired). */
  /**
   * The leases among `leases` live at `now` (state `leased`, not expired), found by the positions they name
   * (a lease is `<token>.<position>`): primary-key reads, whatever else the group holds.
   */
  const liveLeases = (on: Db, ownerKeyId: string, name: string, leases: readonly string[], now: Date) =>
    events(on, ownerKeyId, name).where('position', 'in', leasePositions(leases)).where('state', '=', 'leased').where('lease', 'in', leases)
      .where('lease_expires_at', '>=', now.toISOString());
  /** The group's rows at `positions`, by primary key. */
  const rowsAt = (on: Db, ownerKeyId: string, name: string, positions: readonly number[]) => ({
    update: () => on.updateTable('consumer_group_events').where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).where('position', 'in', [...positions]),
    delete: () => on.deleteFrom('consumer_group_events').where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).where('position', 'in', [...positions]),
  });
  /**
   * Events whose lease expired on their last delivery: parked as of the expiry. Until a write parks them
   * (`parkSpent`), reads show them parked all the same.
   */
  const spent = (select: ExpressionBuilder<PetStoreDatabase, 'consumer_group_events'>, group: ConsumerGroup, at: string) =>
    select.and([select('state', '=', 'leased'), select('lease_expires_at', '<', at), select('deliveries', '>=', group.maxDeliveries)]);
  const spentReason = (deliveries: unknown) => `lease expired on delivery ${String(deliveries)}`;
  const parkSpent = (on: Db, group: ConsumerGroup, at: string) =>
    on
      .updateTable('consumer_group_events')
      .set((set) => ({
        state: 'parked', reason: sql<string>`'lease expired on delivery ' || cast(${set.ref('deliveries')} as text)`, parked_at: set.ref('lease_expires_at'),
        lease: null, consumer: null, lease_expires_at: null,
      }))
      .where('owner_key_id', '=', group.ownerKeyId).where('group_name', '=', group.name)
      .where((where) => spent(where, group, at))
      .execute();
  /**
   * Records that `consumer` claimed at `at`; a consumer new to the group is refused (false) while the group
   * shows as many as it may, once those not seen within its window are pruned.
   */
  const markSeen = async (on: Db, group: ConsumerGroup, consumer: string, at: Date): Promise<boolean> => {
    const seen = { owner_key_id: group.ownerKeyId, group_name: group.name, consumer, last_seen_at: at.toISOString() };
    const updated = await on.updateTable('consumer_group_consumers').set({ last_seen_at: seen.last_seen_at })
      .where('owner_key_id', '=', seen.owner_key_id).where('group_name', '=', seen.group_name).where('consumer', '=', consumer).executeTakeFirst();
    if (updated.numUpdatedRows > 0n) return true;
    const since = new Date(at.getTime() - consumersWindowMs(group)).toISOString();
    await on.deleteFrom('consumer_group_consumers').where('owner_key_id', '=', seen.owner_key_id).where('group_name', '=', seen.group_name).where('last_seen_at', '<', since).execute();
    const shown = await on.selectFrom('consumer_group_consumers').select(count).where('owner_key_id', '=', seen.owner_key_id).where('group_name', '=', seen.group_name).executeTakeFirstOrThrow();
    if (Number(shown.count) >= (limits.consumersPerGroup ?? GROUP_LIMITS.consumersPerGroup)) return false;
    await on.insertInto('consumer_group_consumers').values(seen).execute();
    return true;
  };
  const outcome = (leases: readonly string[], done: LeaseOutcome['done']): LeaseOutcome => {
    const held = new Set(done.map((entry) => entry.lease));
    return { done, stale: [...new Set(leases)].filter((lease) => !held.has(lease)) };
  };

  return {
    async create(ownerKeyId, name, settings, takenTo, now, maxPerOwner) {
      return run(async () => {
        const createIn = async (on: Db) => {
          const existing = await on.selectFrom('consumer_groups').selectAll().where('owner_key_id', '=', ownerKeyId).where('name', '=', name).executeTakeFirst();
          if (existing) {
            const group = groupFromRow(existing);
            return sameGroupSettings(group, settings) ? { outcome: 'exists' as const, group } : { outcome: 'conflict' as const };
          }
          const owned = await on.selectFrom('consumer_groups').select(count).where('owner_key_id', '=', ownerKeyId).executeTakeFirstOrThrow();
          if (Number(owned.count) >= maxPerOwner) throw new GroupLimitReached(maxPerOwner);
          const row: ConsumerGroupsTable = {
            owner_key_id: ownerKeyId, name, ack_timeout_ms: settings.ackTimeoutMs, max_deliveries: settings.maxDeliveries, start: String(settings.start),
            types: settings.types === undefined ? null : JSON.stringify(settings.types), created_at: now.toISOString(), taken_to: takenTo,
          };
          await on.insertInto('consumer_groups').values(row).execute();
          return { outcome: 'created' as const, group: groupFromRow(row) };
        };
        // The count holds only while no other create of the same owner runs: SQLite's write lock says so; on
        // PostgreSQL a lock on the owner, held to the end of the transaction, makes their creates take turns.
        return transaction(async (on) => {
          await dialect.holdKey(on, `consumer-groups:${ownerKeyId}`);
          return createIn(on);
        });
      });
    },

    async get(ownerKeyId, name) {
      const row = await run(() => db.selectFrom('consumer_groups').selectAll().where('owner_key_id', '=', ownerKeyId).where('name', '=', name).executeTakeFirst());
      return row && groupFromRow(row);
    },

    async pending(ownerKeyId, name, now) {
      const at = now.toISOString();
      const row = await run(() => db.selectFrom('consumer_groups as g')
        .selectAll('g')
        .select((select) => [
          // Each from the state's own index ranges: parked rows are never read.
          select.selectFrom('consumer_group_events as e').select((inner) => count(inner))
            .whereRef('e.owner_key_id', '=', 'g.owner_key_id').whereRef('e.group_name', '=', 'g.name').where('e.state', 'in', ['ready', 'leased'])
            .as('unsettled'),
          select.exists(
            select.selectFrom('consumer_group_events as e')
              .select('e.position')
              .whereRef('e.owner_key_id', '=', 'g.owner_key_id').whereRef('e.group_name', '=', 'g.name')
              .where('e.state', 'in', ['ready', 'leased'])
              .where((where) => where.or([
                where.and([where('e.state', '=', 'ready'), where.or([where('e.not_before', 'is', null), where('e.not_before', '<=', at)])]),
                where.and([where('e.state', '=', 'leased'), where('e.lease_expires_at', '<', at)]),
              ])),
          ).as('due'),
        ])
        .where('g.owner_key_id', '=', ownerKeyId).where('g.name', '=', name)
        .executeTakeFirst());
      return row && { group: groupFromRow(row), unsettled: Number(row.unsettled ?? 0), due: Boolean(row.due) };
    },

    async status(ownerKeyId, name, now) {
      return run(async () => {
        const row = await db.selectFrom('consumer_groups').selectAll().where('owner_key_id', '=', ownerKeyId).where('name', '=', name).executeTakeFirst();
        if (!row) return undefined;
        const group = groupFromRow(row);
        const at = now.toISOString();
        const states = await events(db, ownerKeyId, name)
          .select((select) => [
            // `due`: can be handed out now (ready and not held back, or its lease expired), but for per-pet order.
            sql<string>`case when ${spent(select, group, at)} then 'parked'
              when (state = 'ready' and (not_before is null or not_before <= ${at})) or (state = 'leased' and lease_expires_at < ${at}) then 'due'
              else state end`.as('shown'),
            count(select), select.fn.min('position').as('first'),
          ])
          .groupBy('shown')
          .execute();
        const leased = await events(db, ownerKeyId, name)
          .select((select) => ['consumer', count(select), select.fn.max('lease_expires_at').as('latest')])
          .where('state', '=', 'leased')
          .where('lease_expires_at', '>=', at)
          .groupBy('consumer')
          .execute();
        const since = new Date(now.getTime() - consumersWindowMs(group)).toISOString();
        const seen = await db.selectFrom('consumer_group_consumers').select(['consumer', 'last_seen_at'])
          .where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).where('last_seen_at', '>=', since)
          .execute();
        const of = (state: string) => states.find((entry) => entry.shown === state);
        const unsettledStates = ['ready', 'due', 'leased'];
        const firstUnsettled = Math.min(...unsettledStates.map((state) => Number(of(state)?.first ?? Infinity)));
        const inFlight = leased.reduce((sum, entry) => sum + Number(entry.count), 0);
        const consumers = new Map<string, { consumer: string; inFlight: number; lastSeenAt: string }>();
        for (const entry of seen) consumers.set(entry.consumer, { consumer: entry.consumer, inFlight: 0, lastSeenAt: entry.last_seen_at });
        for (const entry of leased) {
          // A live lease was claimed or extended one ack timeout before it expires.
          const leasedAt = new Date(Date.parse(String(entry.latest)) - group.ackTimeoutMs).toISOString();
          const known = consumers.get(entry.consumer!);
          const lastSeenAt = known && known.lastSeenAt > leasedAt ? known.lastSeenAt : leasedAt;
          consumers.set(entry.consumer!, { consumer: entry.consumer!, inFlight: Number(entry.count), lastSeenAt });
        }
        return {
          group,
          checkpoint: Math.min(group.takenTo, firstUnsettled - 1),
          unsettled: unsettledStates.reduce((sum, state) => sum + Number(of(state)?.count ?? 0), 0),
          inFlight,
          parked: Number(of('parked')?.count ?? 0),
          consumers: [...consumers.values()].sort((a, b) => (a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : 0)),
        };
      });
    },

    async list(ownerKeyId) {
      let query = db.selectFrom('consumer_groups').selectAll();
      if (ownerKeyId !== undefined) query = query.where('owner_key_id', '=', ownerKeyId);
      const rows = await run(() => query.orderBy('owner_key_id').orderBy('name').execute());
      return rows.map(groupFromRow);
    },

    async delete(ownerKeyId, name) {
      const result = await transaction(async (on) => {
        await on.deleteFrom('consumer_group_events').where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).execute();
        await on.deleteFrom('consumer_group_consumers').where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).execute();
        return on.deleteFrom('consumer_groups').where('owner_key_id', '=', ownerKeyId).where('name', '=', name).executeTakeFirst();
      });
      return result.numDeletedRows > 0n;
    },

    async take(ownerKeyId, name, from, to, taken) {
      const moved = await holding(ownerKeyId, name, async (on, group) => {
        if (group.takenTo !== from) return false;
        // A group holding as many parked events as it may takes no more until some are replayed: counted up to the bound only.
        const bound = limits.parkedPerGroup ?? GROUP_LIMITS.parkedPerGroup;
        const parked = await on
          .selectFrom((inner) => inner.selectFrom('consumer_group_events').select('position')
            .where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).where('state', '=', 'parked').limit(bound).as('p'))
          .select((select) => count(select)).executeTakeFirstOrThrow();
        if (Number(parked.count) >= bound) return false;
        await dialect.insertRows(on, CONSUMER_GROUP_EVENTS, taken.map((stored) => newEventRow(ownerKeyId, name, stored)));
        await on.updateTable('consumer_groups').set({ taken_to: to }).where('owner_key_id', '=', ownerKeyId).where('name', '=', name).execute();
        return true;
      });
      return moved ?? false;
    },

    async claim(ownerKeyId, name, consumer, max, now, seen = true) {
      const { inFlightPerGroup, inFlightPerConsumer } = limits;
      return holding(ownerKeyId, name, async (on, group) => {
        const at = now.toISOString();
        if (seen && !(await markSeen(on, group, consumer, now))) return { full: 'consumers' as const, retryAfterMs: consumersWindowMs(group) };
        // An expired lease was a delivery: one that spent the last parks the event instead of handing it out again.
        await parkSpent(on, group, at);
        const live = await events(on, ownerKeyId, name)
          .select((select) => ['consumer', count(select), select.fn.min('lease_expires_at').as('soonest')])
          .where('state', '=', 'leased').where('lease_expires_at', '>=', at)
          .groupBy('consumer')
          .execute();
        const groupInFlight = live.reduce((sum, entry) => sum + Number(entry.count), 0);
        const mine = live.find((entry) => entry.consumer === consumer);
        const consumerInFlight = Number(mine?.count ?? 0);
        const freeIn = (soonest: unknown) => Math.max(1, Date.parse(String(soonest)) - now.getTime());
        if (groupInFlight >= inFlightPerGroup) {
          return { full: 'group' as const, retryAfterMs: freeIn(live.map((entry) => String(entry.soonest)).sort()[0]) };
        }
        if (consumerInFlight >= inFlightPerConsumer) return { full: 'consumer' as const, retryAfterMs: freeIn(mine!.soonest) };
        const room = Math.min(max, inFlightPerGroup - groupInFlight, inFlightPerConsumer - consumerInFlight);
        // Ready events, and those whose lease expired, each read along its state's own index in position order
        // (parked rows are never read), then the earliest `room` of both.
        const dueIn = (state: 'ready' | 'leased') => on
          .selectFrom('consumer_group_events as e')
          .select(['e.position', 'e.deliveries', 'e.event'])
          .where('e.owner_key_id', '=', ownerKeyId).where('e.group_name', '=', name).where('e.state', '=', state)
          .where((where) => (state === 'ready'
            ? where.or([where('e.not_before', 'is', null), where('e.not_before', '<=', at)])
            : where('e.lease_expires_at', '<', at)))
          // Per-pet order: only the earliest unsettled event of its pet.
          .where(({ not, exists, selectFrom }) => not(exists(
            selectFrom('consumer_group_events as p')
              .select('p.position')
              .whereRef('p.owner_key_id', '=', 'e.owner_key_id').whereRef('p.group_name', '=', 'e.group_name').whereRef('p.stream_id', '=', 'e.stream_id')
              .whereRef('p.position', '<', 'e.position')
              .where('p.state', 'in', ['ready', 'leased']),
          )))
          .orderBy('e.state').orderBy('e.position')
          .limit(room)
          .execute();
        const due = [...(await dueIn('ready')), ...(await dueIn('leased'))].sort((a, b) => Number(a.position) - Number(b.position)).slice(0, room);
        if (due.length === 0) return { claims: [] };
        const token = randomBytes(12).toString('base64url');
        const expiresAt = new Date(now.getTime() + group.ackTimeoutMs).toISOString();
        const positions = due.map((row) => Number(row.position));
        await on
          .updateTable('consumer_group_events')
          .set((set) => ({
            state: 'leased', lease: sql<string>`${token} || '.' || cast(${set.ref('position')} as text)`, consumer, lease_expires_at: expiresAt, not_before: null,
            deliveries: sql<number>`${set.ref('deliveries')} + 1`,
          }))
          .where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).where('position', 'in', positions)
          .execute();
        return {
          claims: due.map((row) => ({
            lease: `${token}.${Number(row.position)}`, position: Number(row.position), deliveries: row.deliveries + 1, leaseExpiresAt: expiresAt,
            event: JSON.parse(row.event) as StoredEvent,
          })),
        };
      });
    },

    async ack(ownerKeyId, name, leases, now) {
      const done = await holding(ownerKeyId, name, async (on) => {
        const held = await liveLeases(on, ownerKeyId, name, leases, now).select(['lease', 'position']).execute();
        if (held.length === 0) return [];
        await rowsAt(on, ownerKeyId, name, held.map((row) => Number(row.position))).delete().execute();
        return held.map((row) => ({ lease: row.lease! }));
      });
      return done && outcome(leases, done);
    },

    async nack(ownerKeyId, name, leases, now, then) {
      const done = await holding(ownerKeyId, name, async (on, group) => {
        const held = await liveLeases(on, ownerKeyId, name, leases, now).select(['lease', 'position', 'deliveries']).execute();
        const positions = (rows: typeof held) => rows.map((row) => Number(row.position));
        const when = now.toISOString();
        if ('release' in then) {
          if (held.length > 0) {
            await rowsAt(on, ownerKeyId, name, positions(held)).update()
              .set((set) => ({ state: 'ready', not_before: null, lease: null, consumer: null, lease_expires_at: null, deliveries: sql<number>`${set.ref('deliveries')} - 1` }))
              .execute();
          }
          return held.map((row) => ({ lease: row.lease! }));
        }
        const park = held.filter((row) => 'park' in then || row.deliveries >= group.maxDeliveries);
        const retry = held.filter((row) => !park.includes(row));
        if (park.length > 0) {
          // One statement for every parked row, its reason from its own deliveries.
          const reason = 'park' in then
            ? sql<string>`'parked by a nack on delivery ' || cast(deliveries as text)`
            : sql<string>`'nacked on delivery ' || cast(deliveries as text) || ${` of ${group.maxDeliveries}`}`;
          await rowsAt(on, ownerKeyId, name, positions(park)).update()
            .set({ state: 'parked', reason, parked_at: when, lease: null, consumer: null, lease_expires_at: null })
            .execute();
        }
        if (retry.length > 0) {
          const notBefore = 'notBefore' in then ? then.notBefore.toISOString() : when;
          await rowsAt(on, ownerKeyId, name, positions(retry)).update().set({ state: 'ready', not_before: notBefore, lease: null, consumer: null, lease_expires_at: null }).execute();
        }
        return held.map((row) => ({ lease: row.lease! }));
      });
      return done && outcome(leases, done);
    },

    async extend(ownerKeyId, name, leases, now) {
      const done = await holding(ownerKeyId, name, async (on, group) => {
        const held = await liveLeases(on, ownerKeyId, name, leases, now).select(['lease', 'position']).execute();
        if (held.length === 0) return [];
        const leaseExpiresAt = new Date(now.getTime() + group.ackTimeoutMs).toISOString();
        await rowsAt(on, ownerKeyId, name, held.map((row) => Number(row.position))).update().set({ lease_expires_at: leaseExpiresAt }).execute();
        return held.map((row) => ({ lease: row.lease!, leaseExpiresAt }));
      });
      return done && outcome(leases, done);
    },

    async totals(now) {
      return run(async () => {
        const at = now.toISOString();
        const states = await db
          .selectFrom('consumer_group_events')
          .select((select) => ['state', count(select), sql<number | string>`sum(case when lease_expires_at >= ${at} then 1 else 0 end)`.as('live')])
          .groupBy('state')
          .execute();
        // One row a group: its checkpoint is the lower of how far it took the log and its first unsettled event.
        const groups = await db
          .selectFrom('consumer_groups as g')
          .leftJoin('consumer_group_events as e', (join) =>
            join.onRef('e.owner_key_id', '=', 'g.owner_key_id').onRef('e.group_name', '=', 'g.name').on('e.state', 'in', ['ready', 'leased']))
          .select((select) => ['g.taken_to', select.fn.min('e.position').as('first')])
          .groupBy(['g.owner_key_id', 'g.name', 'g.taken_to'])
          .execute();
        const sum = (keep: (row: (typeof states)[number]) => boolean) => states.filter(keep).reduce((total, row) => total + Number(row.count), 0);
        const live = Number(states.find((row) => row.state === 'leased')?.live ?? 0);
        const checkpoints = groups.map((row) => Math.min(Number(row.taken_to), row.first === null ? Infinity : Number(row.first) - 1));
        return {
          groups: groups.length,
          inFlight: live,
          waiting: sum((row) => row.state !== 'parked') - live,
          parked: sum((row) => row.state === 'parked'),
          lowestCheckpoint: checkpoints.length === 0 ? undefined : Math.min(...checkpoints),
        };
      });
    },

    async parked(ownerKeyId, name, after, limit, now) {
      const rows = await run(async () => {
        const group = await db.selectFrom('consumer_groups').selectAll().where('owner_key_id', '=', ownerKeyId).where('name', '=', name).executeTakeFirst();
        if (!group) return [];
        const at = now.toISOString();
        return events(db, ownerKeyId, name).selectAll()
          .where((where) => where.or([where('state', '=', 'parked'), spent(where, groupFromRow(group), at)]))
          .where('position', '>', after).orderBy('position').limit(limit).execute();
      });
      return rows.map((row) => ({
        position: Number(row.position), reason: row.state === 'parked' ? (row.reason ?? '') : spentReason(row.deliveries), deliveries: row.deliveries,
        parkedAt: (row.state === 'parked' ? row.parked_at : row.lease_expires_at) ?? '', event: JSON.parse(row.event) as StoredEvent,
      }));
    },

    async unpark(ownerKeyId, name, which, now) {
      const positions = await holding(ownerKeyId, name, async (on, group) => {
        await parkSpent(on, group, now.toISOString());
        let query = events(on, ownerKeyId, name).select('position').where('state', '=', 'parked');
        query = 'positions' in which ? query.where('position', 'in', which.positions.length > 0 ? [...which.positions] : [-1]) : query.where('position', '>', which.after).orderBy('position').limit(which.limit);
        const chosen = (await query.execute()).map((row) => Number(row.position));
        if (chosen.length === 0) return [];
        await on.updateTable('consumer_group_events').set({ state: 'ready', deliveries: 0, reason: null, parked_at: null, not_before: null })
          .where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).where('position', 'in', chosen).execute();
        return chosen.sort((a, b) => a - b);
      });
      return positions ?? [];
    },
  };
}

/** The positions leases name (`<token>.<position>`); a lease not of that shape names none. */
function leasePositions(leases: readonly string[]): number[] {
  const positions = leases.map((lease) => Number(lease.slice(lease.lastIndexOf('.') + 1))).filter((position) => Number.isSafeInteger(position) && position > 0);
  return positions.length > 0 ? positions : [-1];
}

function groupFromRow(row: Selectable<ConsumerGroupsTable>): ConsumerGroup {
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


function newEventRow(ownerKeyId: string, name: string, stored: StoredEvent): ConsumerGroupEventsTable {
  return {
    owner_key_id: ownerKeyId, group_name: name, position: stored.position, stream_id: stored.streamId, state: 'ready', deliveries: 0, not_before: null,
    lease: null, consumer: null, lease_expires_at: null, reason: null, parked_at: null, event: JSON.stringify(stored),
  };
}
