// A group's leases: a claim's fresh events kept as ranges of the log, turned into a row an event when a
// rule must act on single events, and the positions a lease names.
import type { Kysely } from 'kysely';
import type { ConsumerGroup, FreshWalk, StoredEvent } from '../../../application/index.ts';
import { EXCEPTION_COLUMNS, rangeEvents } from './consumer-group-statements.ts';
import type { groupStatements } from './consumer-group-statements.ts';
import type { ConsumerGroupExceptionsTable, ConsumerGroupLeasesTable, PetStoreDatabase } from '../schema.ts';

type Db = Kysely<PetStoreDatabase>;
type Statements = ReturnType<typeof groupStatements>;

/**
 * A group as its row holds it: the settings and cursor, and the id its events' rows are keyed by; held
 * alone, also whether it may hold event rows in `consumer_group_exceptions` (false only when it holds
 * none: what finds no row is then not asked); read for a claim, how many events it held unsettled when locked,
 * and when its consumer was last seen (null: never, or pruned).
 */
export type HeldGroup = ConsumerGroup & { readonly id: number; mayHoldRows?: boolean; readonly unsettled?: number; readonly seenAt?: string | null };

/** Turns the ranged leases under these tokens (or the one starting at `from`) into a row an event, for rules that act on single events. */
export async function openRanges(on: Db, group: HeldGroup, which: { readonly tokens: readonly string[] } | { readonly from: number }, rangeAcked: Statements['rangeAcked']): Promise<void> {
  const ranges = rangeEvents(on).where('r.group_id', '=', group.id);
  group.mayHoldRows = true;
  if ('tokens' in which) {
    if (which.tokens.length === 0) return;
    await on.insertInto('consumer_group_exceptions').columns([...EXCEPTION_COLUMNS]).expression(ranges.where('r.lease', 'in', [...which.tokens])).execute();
    await on.deleteFrom('consumer_group_leases').where('group_id', '=', group.id).where('lease', 'in', [...which.tokens]).execute();
  } else {
    await on.insertInto('consumer_group_exceptions').columns([...EXCEPTION_COLUMNS]).expression(ranges.where('r.from_position', '=', which.from)).execute();
    await on.executeQuery(rangeAcked({ groupId: group.id, from: which.from }));
  }
}

/**
 * The rows of `leases` live at `now` (state `leased`, not expired, under the lease's token), found by
 * the positions they name (a lease is `<token>.<position>`): primary-key reads, whatever else the group holds.
 */
export async function liveLeases(on: Db, group: HeldGroup, leases: readonly string[], now: Date, rangeAcked: Statements['rangeAcked']): Promise<{ position: number; deliveries: number; lease: string }[]> {
  const held: { position: number; deliveries: number; lease: string }[] = [];
  const byToken = positionsByToken(leases);
  await openRanges(on, group, { tokens: [...byToken.keys()] }, rangeAcked);
  for (const [token, positions] of byToken) {
    const rows = await on.selectFrom('consumer_group_exceptions').where('group_id', '=', group.id).select(['position', 'deliveries']).where('position', 'in', positions).where('state', '=', 'leased')
      .where('lease', '=', token).where('lease_expires_at', '>=', now.toISOString()).execute();
    for (const row of rows) held.push({ position: Number(row.position), deliveries: row.deliveries, lease: `${token}.${Number(row.position)}` });
  }
  return held;
}

/** The positions leases name (a lease is `<token>.<position>`), by token; a lease not of that shape names none. */
export function positionsByToken(leases: readonly string[]): Map<string, number[]> {
  const byToken = new Map<string, number[]>();
  for (const lease of new Set(leases)) {
    const dot = lease.lastIndexOf('.');
    const position = Number(lease.slice(dot + 1));
    if (!(dot > 0 && Number.isSafeInteger(position) && position > 0)) continue;
    const token = lease.slice(0, dot);
    const positions = byToken.get(token);
    if (positions) positions.push(position);
    else byToken.set(token, [position]);
  }
  return byToken;
}

/** The walk's leased events as ranges of the page: each run of them with no held-back event between. */
export function leaseRanges(
  groupId: number, page: readonly StoredEvent[], walk: FreshWalk, lease: Pick<ConsumerGroupLeasesTable, 'lease' | 'consumer' | 'lease_expires_at'>,
): ConsumerGroupLeasesTable[] {
  // Most claims hold nothing back: one range, with no set of held positions and nothing made an event.
  const held = walk.hold.length === 0 ? undefined : new Set(walk.hold.map((stored) => stored.position));
  const ranges: ConsumerGroupLeasesTable[] = [];
  let run: ConsumerGroupLeasesTable | undefined;
  for (const stored of page) {
    if (stored.position > walk.cursor) break;
    if (held?.has(stored.position)) {
      if (run) ranges.push(run);
      run = undefined;
    } else if (run) {
      run.to_position = stored.position;
      run.events += 1;
    } else {
      run = { group_id: groupId, from_position: stored.position, to_position: stored.position, events: 1, ...lease };
    }
  }
  if (run) ranges.push(run);
  return ranges;
}

/** An event's row in `consumer_group_exceptions`, in the state given. */
export function exceptionRow(groupId: number, stored: StoredEvent, state: Partial<ConsumerGroupExceptionsTable> & Pick<ConsumerGroupExceptionsTable, 'state' | 'deliveries'>): ConsumerGroupExceptionsTable {
  return {
    group_id: groupId, position: stored.position, stream_id: stored.streamId, not_before: null, lease: null, consumer: null, lease_expires_at: null,
    reason: null, parked_at: null, ...state,
  };
}
