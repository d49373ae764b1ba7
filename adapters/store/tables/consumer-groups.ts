import { sql } from 'kysely';
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { claimPage, consumersWindowMs, cursorPastOtherTypes, GROUP_LIMITS, GroupLimitReached, petsWithEarlierEvents, sameGroupSettings, walkFresh } from '../../../application/index.ts';
import type { Claim, ClaimOutcome, ClaimRequest, ConsumerGroup, ConsumerGroups, GroupHandle, LeaseOutcome, StoredEvent } from '../../../application/index.ts';
import { count, eventRows, groupFromRow, groupRow, groupStatements } from './consumer-group-statements.ts';
import { translated } from '../sql-dialect.ts';
import { readEventsAt, readLogToEndOn } from '../sql-event-log.ts';
import { CONSUMER_GROUP_EXCEPTIONS, CONSUMER_GROUP_LEASES } from '../schema.ts';
import type { ConsumerGroupExceptionsTable, ConsumerGroupsTable, PetStoreDatabase } from '../schema.ts';
import type { SqlPetStore } from '../sql-pet-store.ts';
import { newLeaseToken } from '../lease-tokens.ts';
import { exceptionRow, leaseRanges, liveLeases, openRanges, positionsByToken } from './consumer-group-leases.ts';
import type { HeldGroup } from './consumer-group-leases.ts';

type Db = Kysely<PetStoreDatabase>;

/** How stale a consumer's `lastSeenAt` may be while it keeps claiming: its row is written at most once this often. */
const SEEN_PRECISION_MS = 1000;

/**
 * Consumer groups in `consumer_groups`, `consumer_group_leases` and `consumer_group_exceptions`, the same queries
 * on SQLite and PostgreSQL. A group reads its events from the log by position and keeps its cursor (`taken_to`);
 * a claim's fresh leases are ranges (one row an event for a group with `types`), and event rows exist otherwise only
 * for exceptions: a retry, an expired lease, one held back by its pet, a parked one. Every change runs in one
 * transaction that holds the group alone: on SQLite the store's writer, on PostgreSQL the group's row locked
 * `FOR UPDATE`, so claims, acks and nacks of one group take turns across instances.
 */
export function createSqlConsumerGroups(
  store: Pick<SqlPetStore, 'db' | 'dialect' | 'writeOutsideLog' | 'boundedTransaction'>,
  limits: {
    readonly inFlightPerGroup: number; readonly inFlightPerConsumer: number; readonly consumersPerGroup?: number; readonly parkedPerGroup?: number;
  } = GROUP_LIMITS,
): ConsumerGroups {
  const { db, dialect } = store;
  const run = <T>(work: () => Promise<T>) => translated(dialect, work);
  // Every group write is answered within the bound a pet's write has, from its arrival, on either backend.
  const transaction = <T>(work: (on: Db) => Promise<T>): Promise<T> =>
    run(() => (store.writeOutsideLog ?? store.boundedTransaction ?? ((each) => db.transaction().execute(each)))(work));
  const {
    groupHeld, groupHeldForClaim, pendingOf, seenAgain, spentParked, liveByConsumer, waitingReady, waitingExpired, parkedUpTo, streamsUnsettled, cursorMoved, leasesAcked,
    expiredRangesOpened, expiredRangesDropped, rangesOf, wholeRangeAcked, rangeAcked,
  } = groupStatements(db, dialect);

  /**
   * `work` with the group held alone, its ranged leases that expired by `now` (when given) first turned into
   * a row an event (as every rule over expired leases reads them); undefined when there is no such group.
   * For a claim by `forClaim` (its consumer), the same read counts the group's unsettled events and says when the consumer was last seen.
   */
  const holding = <T>(ownerKeyId: string, name: string, now: Date | undefined, work: (on: Db, group: HeldGroup) => Promise<T>, forClaim?: string): Promise<T | undefined> =>
    transaction(async (on) => {
      // Without a time nothing has expired: no lease expires before the empty text.
      const at = now?.toISOString() ?? '';
      const read = forClaim === undefined ? groupHeld : groupHeldForClaim;
      const [row] = (await on.executeQuery<Selectable<ConsumerGroupsTable> & { rangesExpired: unknown; eventRows: unknown; unsettled?: unknown; seenAt?: string | null }>(
        read({ owner: ownerKeyId, name, at, consumer: forClaim ?? '' }))).rows;
      if (!row) return undefined;
      // Expired ranges are opened into event rows just below (they stay as many unsettled events).
      const group: HeldGroup = {
        ...groupFromRow(row), id: Number(row.id), mayHoldRows: Number(row.eventRows) > 0 || Number(row.rangesExpired) > 0,
        ...(forClaim === undefined ? {} : { unsettled: Number(row.unsettled ?? 0), seenAt: row.seenAt ?? null }),
      };
      if (Number(row.rangesExpired) > 0) {
        await on.executeQuery(expiredRangesOpened({ groupId: group.id, at }));
        await on.executeQuery(expiredRangesDropped({ groupId: group.id, at }));
      }
      return work(on, group);
    });
  const rowsOf = (on: Db, group: { readonly id: number }) => on.selectFrom('consumer_group_exceptions').where('group_id', '=', group.id);
  /** The group's event rows, its ranged leases' events among them (for reads: see `eventRows`). */
  const allRowsOf = (on: Db, group: { readonly id: number }) => eventRows(on).where('group_id', '=', group.id);
  const rowsAt = (on: Db, group: HeldGroup, positions: readonly number[]) => ({
    update: () => on.updateTable('consumer_group_exceptions').where('group_id', '=', group.id).where('position', 'in', [...positions]),
    delete: () => on.deleteFrom('consumer_group_exceptions').where('group_id', '=', group.id).where('position', 'in', [...positions]),
  });
  /**
   * Events whose lease expired on their last delivery: parked as of the expiry. Until a write parks them
   * (`parkSpent`), reads show them parked all the same.
   */
  const spent = (select: ExpressionBuilder<PetStoreDatabase, 'consumer_group_exceptions'>, group: ConsumerGroup, at: string) =>
    select.and([select('state', '=', 'leased'), select('lease_expires_at', '<', at), select('deliveries', '>=', group.maxDeliveries)]);
  const spentReason = (deliveries: unknown) => `lease expired on delivery ${String(deliveries)}`;
  const parkSpent = (on: Db, group: HeldGroup, at: string) => on.executeQuery(spentParked({ groupId: group.id, at, maxDeliveries: group.maxDeliveries }));
  /**
   * Records that `consumer` claimed at `at`, to the second (`SEEN_PRECISION_MS`: a busy worker's claims write
   * no row of it); a consumer new to the group is refused (false) while the group shows as many as it may,
   * once those not seen within its window are pruned.
   */
  const markSeen = async (on: Db, group: HeldGroup, consumer: string, at: Date): Promise<boolean> => {
    const seen = { owner_key_id: group.ownerKeyId, group_name: group.name, consumer, last_seen_at: at.toISOString() };
    // The claim's locked read said when it was last seen (a text), or that it has no row (null); undefined: not read.
    if (typeof group.seenAt === 'string') {
      const since = at.getTime() - Date.parse(group.seenAt);
      if (since >= 0 && since < SEEN_PRECISION_MS) return true;
    }
    if (group.seenAt !== null) {
      const updated = await on.executeQuery(seenAgain({ owner: group.ownerKeyId, name: group.name, consumer, at: seen.last_seen_at }));
      if (Number(updated.numAffectedRows ?? 0) > 0) return true;
    }
    const since = new Date(at.getTime() - consumersWindowMs(group)).toISOString();
    await on.deleteFrom('consumer_group_consumers').where('owner_key_id', '=', seen.owner_key_id).where('group_name', '=', seen.group_name).where('last_seen_at', '<', since).execute();
    const shown = await on.selectFrom('consumer_group_consumers').select(count).where('owner_key_id', '=', seen.owner_key_id).where('group_name', '=', seen.group_name).executeTakeFirstOrThrow();
    if (Number(shown.count) >= (limits.consumersPerGroup ?? GROUP_LIMITS.consumersPerGroup)) return false;
    await on.insertInto('consumer_group_consumers').values(seen).execute();
    return true;
  };
  const outcome = (leases: readonly string[], done: LeaseOutcome['done']): LeaseOutcome => {
    // Each lease named once and each done (a busy worker's acks): none stale.
    if (done.length === leases.length) return { done, stale: [] };
    const held = new Set(done.map((entry) => entry.lease));
    return { done, stale: [...new Set(leases)].filter((lease) => !held.has(lease)) };
  };
  /**
   * Settles the events of `leases` live at `now`: a ranged lease named whole is deleted as one row (one it
   * holds only some of is first turned into a row an event); the rest, one `DELETE … RETURNING` a lease token.
   * A token's leases that name one whole range without a gap, as a claim's usually do, take one statement.
   */
  const ackHeld = async (on: Db, group: HeldGroup, leases: readonly string[], now: Date): Promise<LeaseOutcome> => {
    const acked: { lease: string }[] = [];
    const at = now.toISOString();
    for (const [token, named] of positionsByToken(leases)) {
      // The common case, a claim's leases acked together: its one range, deleted at once.
      const [from, to] = [Math.min(...named), Math.max(...named)];
      if (to - from + 1 === named.length) {
        const whole = await on.executeQuery(wholeRangeAcked({ groupId: group.id, token, from, to, events: named.length, at }));
        if (Number(whole.numAffectedRows ?? 0) > 0) {
          for (const position of named) acked.push({ lease: `${token}.${position}` });
          continue;
        }
      }
      let positions = named;
      const ranges = (await on.executeQuery<{ from_position: number | string; to_position: number | string; events: number }>(rangesOf({ groupId: group.id, token, at }))).rows;
      for (const range of ranges) {
        const [from, to] = [Number(range.from_position), Number(range.to_position)];
        const inRange = positions.filter((position) => position >= from && position <= to);
        if (inRange.length === 0) continue;
        // Named whole only when it has no gap: then the distinct positions named in it are exactly its events.
        if (inRange.length === range.events && to - from + 1 === range.events) {
          await on.executeQuery(rangeAcked({ groupId: group.id, from }));
          for (const position of inRange) acked.push({ lease: `${token}.${position}` });
          positions = positions.filter((position) => position < from || position > to);
        } else {
          await openRanges(on, group, { from }, rangeAcked);
        }
      }
      if (positions.length === 0) continue;
      const { rows } = await on.executeQuery<{ position: number | string }>(leasesAcked({ groupId: group.id, positions, token, at }, positions.length));
      for (const row of rows) acked.push({ lease: `${token}.${Number(row.position)}` });
    }
    return outcome(leases, acked);
  };
  /** Whether the group holds as many parked events as it may: counted up to the bound only. */
  const parkedFull = async (on: Db, group: HeldGroup) => {
    const bound = limits.parkedPerGroup ?? GROUP_LIMITS.parkedPerGroup;
    if (group.mayHoldRows === false) return bound <= 0;
    const [parked] = (await on.executeQuery<{ count: number | string }>(parkedUpTo({ groupId: group.id, bound }))).rows;
    return Number(parked?.count ?? 0) >= bound;
  };

  /** A claim's work on its group, held alone (see `GroupHandle.claim`). */
  const claimHeld = async (on: Db, group: HeldGroup, { consumer, max, now, seen, fresh }: Omit<ClaimRequest, 'acks'>): Promise<ClaimOutcome> => {
    const { inFlightPerGroup, inFlightPerConsumer } = limits;
    const at = now.toISOString();
    if (seen && !(await markSeen(on, group, consumer, now))) return { full: 'consumers' as const, retryAfterMs: consumersWindowMs(group) };
    // A group holding no event row (drained in order: its leases ranges) has nothing spent, waiting or parked.
    const rowsHeld = group.mayHoldRows !== false;
    // An expired lease was a delivery: one that spent the last parks the event instead of handing it out again.
    if (rowsHeld) await parkSpent(on, group, at);
    // Caps that the group's unsettled events, all in flight with this claim, would not reach need no count of its leases.
    const capsOutOfReach = group.unsettled !== undefined && group.unsettled + max <= Math.min(inFlightPerGroup, inFlightPerConsumer);
    const live = capsOutOfReach ? [] : (await on.executeQuery<{ consumer: string | null; count: number | string; soonest: string | null }>(liveByConsumer({ groupId: group.id, at }))).rows;
    const groupInFlight = live.reduce((sum, entry) => sum + Number(entry.count), 0);
    const mine = live.find((entry) => entry.consumer === consumer);
    const consumerInFlight = Number(mine?.count ?? 0);
    const freeIn = (soonest: unknown) => Math.max(1, Date.parse(String(soonest)) - now.getTime());
    if (groupInFlight >= inFlightPerGroup) {
      return { full: 'group' as const, retryAfterMs: freeIn(live.map((entry) => String(entry.soonest)).sort()[0]) };
    }
    if (consumerInFlight >= inFlightPerConsumer) return { full: 'consumer' as const, retryAfterMs: freeIn(mine!.soonest) };
    const room = Math.min(max, inFlightPerGroup - groupInFlight, inFlightPerConsumer - consumerInFlight);
    const token = newLeaseToken();
    const leaseExpiresAt = new Date(now.getTime() + group.ackTimeoutMs).toISOString();
    const claimOf = (event: StoredEvent, deliveries: number): Claim => ({ lease: `${token}.${event.position}`, position: event.position, deliveries, leaseExpiresAt, event });

    // Waiting events (ready, or whose lease expired), oldest first, each the earliest unsettled of its pet.
    const dueIn = async (statement: typeof waitingReady) =>
      (await on.executeQuery<{ position: number | string; deliveries: number }>(statement({ groupId: group.id, at, room }))).rows;
    const due = !rowsHeld ? [] : [...(await dueIn(waitingReady)), ...(await dueIn(waitingExpired))].sort((a, b) => Number(a.position) - Number(b.position)).slice(0, room);
    const claims: Claim[] = [];
    if (due.length > 0) {
      const positions = due.map((row) => Number(row.position));
      await rowsAt(on, group, positions).update()
        .set((set) => ({ state: 'leased', lease: token, consumer, lease_expires_at: leaseExpiresAt, not_before: null, deliveries: sql<number>`${set.ref('deliveries')} + 1` }))
        .execute();
      const events = await readEventsAt(on, positions);
      for (const [index, row] of due.entries()) claims.push(claimOf(events[index]!, row.deliveries + 1));
    }

    // Fresh events from the log past the cursor: those read for the claim, or, when another claim moved
    // the cursor meanwhile (one before it in the same transaction, another instance's), the page after it.
    const page = claims.length >= room ? undefined : await claimPage(
      fresh, group, max, { readLogToEnd: (query) => readLogToEndOn(on, dialect, query) },
      () => group.unsettled ?? Infinity,
    );
    if (page && page.events.length > 0 && claims.length < room && !(await parkedFull(on, group))) {
      const streams = petsWithEarlierEvents(page.events);
      const unsettled = streams.length === 0 ? [] : (await on.executeQuery<{ stream_id: string }>(streamsUnsettled({ groupId: group.id, streams }, streams.length))).rows;
      const walk = walkFresh(page, room - claims.length, new Set(unsettled.map((row) => row.stream_id)));
      const lease = { lease: token, consumer, lease_expires_at: leaseExpiresAt };
      // A group of every type reads every event of the log: its leased events between two held back are one range of it.
      const ranged = group.types === undefined;
      const rows: ConsumerGroupExceptionsTable[] = [
        ...walk.hold.map((stored) => exceptionRow(group.id, stored, { state: 'ready', deliveries: 0 })),
        ...(ranged ? [] : walk.lease.map((stored) => exceptionRow(group.id, stored, { state: 'leased', deliveries: 1, ...lease }))),
      ];
      if (rows.length > 0) {
        group.mayHoldRows = true;
        await dialect.insertRows(on, CONSUMER_GROUP_EXCEPTIONS, rows);
      }
      if (ranged && walk.lease.length > 0) await dialect.insertRows(on, CONSUMER_GROUP_LEASES, leaseRanges(group.id, page.events, walk, lease));
      await on.executeQuery(cursorMoved({ groupId: group.id, cursor: walk.cursor }));
      for (const stored of walk.lease) claims.push(claimOf(stored, 1));
    } else {
      const cursor = cursorPastOtherTypes(page, group.takenTo);
      if (cursor !== undefined) await on.executeQuery(cursorMoved({ groupId: group.id, cursor }));
    }
    return { claims };
  };

  function handle(ownerKeyId: string, name: string): GroupHandle {
    return {
      async get() {
        const row = await run(() => groupRow(db, ownerKeyId, name).executeTakeFirst());
        return row && groupFromRow(row);
      },

      async pending(now) {
        const [row] = (await run(() => db.executeQuery<Selectable<ConsumerGroupsTable> & { unsettled: unknown; due: unknown; ranged: unknown; rangeDue: unknown }>(pendingOf({ owner: ownerKeyId, name, at: now.toISOString() })))).rows;
        return row && { group: groupFromRow(row), unsettled: Number(row.unsettled ?? 0) + Number(row.ranged ?? 0), due: Boolean(row.due) || Boolean(row.rangeDue) };
      },

      async status(now) {
        return run(async () => {
          const row = await groupRow(db, ownerKeyId, name).executeTakeFirst();
          if (!row) return undefined;
          const group = groupFromRow(row);
          const held = { id: Number(row.id) };
          const at = now.toISOString();
          const states = await allRowsOf(db, held)
            .select((select) => [
              sql<string>`case when ${spent(select, group, at)} then 'parked' else state end`.as('shown'),
              count(select), select.fn.min('position').as('first'),
            ])
            .groupBy('shown')
            .execute();
          const leased = await allRowsOf(db, held)
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
          const unsettledStates = ['ready', 'leased'];
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

      async delete() {
        const deleted = await holding(ownerKeyId, name, undefined, async (on, group) => {
          await on.deleteFrom('consumer_group_exceptions').where('group_id', '=', group.id).execute();
          await on.deleteFrom('consumer_group_leases').where('group_id', '=', group.id).execute();
          await on.deleteFrom('consumer_group_consumers').where('owner_key_id', '=', ownerKeyId).where('group_name', '=', name).execute();
          await on.deleteFrom('consumer_groups').where('id', '=', group.id).execute();
          return true;
        });
        return deleted ?? false;
      },

      async claim({ consumer, max, now, seen, fresh, acks }) {
        return holding(ownerKeyId, name, now, async (on, group) => {
          // The acks it carries first, so that the caps count the room they free; committed whatever the claim meets.
          const acked = acks === undefined ? undefined : await ackHeld(on, group, acks, now);
          const outcome = await claimHeld(on, group, { consumer, max, now, seen, fresh });
          return acked === undefined ? outcome : { ...outcome, acked };
        }, fresh !== undefined && fresh.holdRoom === undefined ? consumer : undefined);
      },

      async ack(leases, now) {
        return holding(ownerKeyId, name, now, (on, group) => ackHeld(on, group, leases, now));
      },

      async nack(leases, now, then) {
        const done = await holding(ownerKeyId, name, now, async (on, group) => {
          const held = await liveLeases(on, group, leases, now, rangeAcked);
          const positions = (rows: typeof held) => rows.map((row) => row.position);
          const when = now.toISOString();
          if ('release' in then) {
            if (held.length > 0) {
              await rowsAt(on, group, positions(held)).update()
                .set((set) => ({ state: 'ready', not_before: null, lease: null, consumer: null, lease_expires_at: null, deliveries: sql<number>`${set.ref('deliveries')} - 1` }))
                .execute();
            }
            return held.map((row) => ({ lease: row.lease }));
          }
          const park = held.filter((row) => 'park' in then || row.deliveries >= group.maxDeliveries);
          const retry = held.filter((row) => !park.includes(row));
          if (park.length > 0) {
            // One statement for every parked row, its reason from its own deliveries.
            const reason = 'park' in then
              ? sql<string>`'parked by a nack on delivery ' || cast(deliveries as text)`
              : sql<string>`'nacked on delivery ' || cast(deliveries as text) || ${` of ${group.maxDeliveries}`}`;
            await rowsAt(on, group, positions(park)).update()
              .set({ state: 'parked', reason, parked_at: when, lease: null, consumer: null, lease_expires_at: null })
              .execute();
          }
          if (retry.length > 0) {
            const notBefore = 'notBefore' in then ? then.notBefore.toISOString() : when;
            await rowsAt(on, group, positions(retry)).update().set({ state: 'ready', not_before: notBefore, lease: null, consumer: null, lease_expires_at: null }).execute();
          }
          return held.map((row) => ({ lease: row.lease }));
        });
        return done && outcome(leases, done);
      },

      async extend(leases, now) {
        const done = await holding(ownerKeyId, name, now, async (on, group) => {
          const held = await liveLeases(on, group, leases, now, rangeAcked);
          if (held.length === 0) return [];
          const leaseExpiresAt = new Date(now.getTime() + group.ackTimeoutMs).toISOString();
          await rowsAt(on, group, held.map((row) => row.position)).update().set({ lease_expires_at: leaseExpiresAt }).execute();
          return held.map((row) => ({ lease: row.lease, leaseExpiresAt }));
        });
        return done && outcome(leases, done);
      },

      async parked(after, limit, now) {
        return run(async () => {
          const row = await groupRow(db, ownerKeyId, name).executeTakeFirst();
          if (!row) return [];
          const group = groupFromRow(row);
          const at = now.toISOString();
          const rows = await allRowsOf(db, { id: Number(row.id) }).selectAll()
            .where((where) => where.or([where('state', '=', 'parked'), spent(where, group, at)]))
            .where('position', '>', after).orderBy('position').limit(limit).execute();
          const events = await readEventsAt(db, rows.map((each) => Number(each.position)));
          return rows.map((each, index) => ({
            position: Number(each.position), reason: each.state === 'parked' ? (each.reason ?? '') : spentReason(each.deliveries), deliveries: each.deliveries,
            parkedAt: (each.state === 'parked' ? each.parked_at : each.lease_expires_at) ?? '', event: events[index]!,
          }));
        });
      },

      async unpark(which, now) {
        const positions = await holding(ownerKeyId, name, now, async (on, group) => {
          await parkSpent(on, group, now.toISOString());
          let query = rowsOf(on, group).select('position').where('state', '=', 'parked');
          query = 'positions' in which ? query.where('position', 'in', which.positions.length > 0 ? [...which.positions] : [-1]) : query.where('position', '>', which.after).orderBy('position').limit(which.limit);
          const chosen = (await query.execute()).map((row) => Number(row.position));
          if (chosen.length === 0) return [];
          await rowsAt(on, group, chosen).update().set({ state: 'ready', deliveries: 0, reason: null, parked_at: null, not_before: null }).execute();
          return chosen.sort((a, b) => a - b);
        });
        return positions ?? [];
      },
    };
  }

  return {
    async create(ownerKeyId, name, settings, takenTo, now, maxPerOwner) {
      // The count holds only while no other create of the same owner runs: SQLite's write lock says so; on
      // PostgreSQL a lock on the owner, held to the end of the transaction, makes their creates take turns.
      return transaction(async (on) => {
        await dialect.holdKey(on, `consumer-groups:${ownerKeyId}`);
        const existing = await groupRow(on, ownerKeyId, name).executeTakeFirst();
        if (existing) {
          const group = groupFromRow(existing);
          return sameGroupSettings(group, settings) ? { outcome: 'exists' as const, group } : { outcome: 'conflict' as const };
        }
        const owned = await on.selectFrom('consumer_groups').select(count).where('owner_key_id', '=', ownerKeyId).executeTakeFirstOrThrow();
        if (Number(owned.count) >= maxPerOwner) throw new GroupLimitReached(maxPerOwner);
        const row = {
          owner_key_id: ownerKeyId, name, ack_timeout_ms: settings.ackTimeoutMs, max_deliveries: settings.maxDeliveries, start: String(settings.start),
          types: settings.types === undefined ? null : JSON.stringify(settings.types), created_at: now.toISOString(), taken_to: takenTo,
        };
        await on.insertInto('consumer_groups').values(row).execute();
        return { outcome: 'created' as const, group: groupFromRow(row) };
      });
    },

    async list(ownerKeyId) {
      let query = db.selectFrom('consumer_groups').selectAll();
      if (ownerKeyId !== undefined) query = query.where('owner_key_id', '=', ownerKeyId);
      const rows = await run(() => query.orderBy('owner_key_id').orderBy('name').execute());
      return rows.map(groupFromRow);
    },

    async totals(now) {
      return run(async () => {
        const at = now.toISOString();
        const states = await eventRows(db)
          .select((select) => ['state', count(select), sql<number | string>`sum(case when lease_expires_at >= ${at} then 1 else 0 end)`.as('live')])
          .groupBy('state')
          .execute();
        // One row a group: its checkpoint is the lower of its cursor and its first unsettled event.
        const groups = await db
          .selectFrom('consumer_groups as g')
          .leftJoin(eventRows(db).selectAll().as('e'), (join) => join.onRef('e.group_id', '=', 'g.id').on('e.state', 'in', ['ready', 'leased']))
          .select((select) => ['g.taken_to', select.fn.min('e.position').as('first')])
          .groupBy(['g.id', 'g.taken_to'])
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

    group: handle,
  };
}
