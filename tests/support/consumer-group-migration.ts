import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { createMigrator, migrateToLatest } from '../../adapters/store/migrations.ts';
import { createSqlConsumerGroups } from '../../adapters/store/tables/consumer-groups.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import { ackEvents, claimEvents } from '../../application/index.ts';

/** The last migration before a group's events stopped being copied from the log. */
const BEFORE = '0012_orders';
/** The last migration before fresh events could be leased as ranges. */
const BEFORE_RANGES = '0013_consumer_group_exceptions';
const FAR = '2999-01-01T00:00:00.000Z';

/** Four events of four pets, and one group of every type with its cursor past them. */
async function fourEventsAndAGroup(db: Kysely<any>): Promise<void> {
  for (let id = 1; id <= 4; id++) {
    await db.insertInto('events').values({
      stream_id: `pet-${id}`, stream_version: 1, type: 'PetAdded', data: JSON.stringify({ id, name: `Pet ${id}`, categoryId: 1 }),
      metadata: JSON.stringify({ schemaVersion: 1, recordedAt: '2026-01-01T00:00:00.000Z', requestId: 'r', apiKeyId: 'k' }), recorded_at: '2026-01-01T00:00:00.000Z',
    }).execute();
  }
  await db.insertInto('consumer_groups').values({
    owner_key_id: 'k', name: 'g', ack_timeout_ms: 30_000, max_deliveries: 5, start: 'beginning', types: null, created_at: '2026-01-01T00:00:00.000Z', taken_to: 4,
  }).execute();
}

/** Of four events, the first leased, the second parked, the third waiting for a retry, the fourth acked (no row): as `consumer_group_exceptions` held them, `lease` the token. */
const FOUR_STATES = [
  { position: 1, state: 'leased', lease: 'tokenA', consumer: 'c', lease_expires_at: FAR },
  { position: 2, state: 'parked', reason: 'parked by a nack on delivery 1', parked_at: '2026-01-01T00:00:01.000Z' },
  { position: 3, state: 'ready', not_before: '2026-01-01T00:00:02.000Z' },
] as const;

/**
 * Fills a database migrated up to `BEFORE` with one group as it was then kept (every event copied in,
 * `<token>.<position>` leases) in `FOUR_STATES`, then migrates it to the latest.
 */
export async function groupStateBeforeTheMove(db: Kysely<any>): Promise<void> {
  const { error } = await createMigrator(db).migrateTo(BEFORE);
  if (error) throw error;
  await fourEventsAndAGroup(db);
  await db.insertInto('consumer_group_events').values(FOUR_STATES.map((row) => ({
    owner_key_id: 'k', group_name: 'g', stream_id: `pet-${row.position}`, deliveries: 1, not_before: null, consumer: null,
    lease_expires_at: null, reason: null, parked_at: null, event: '{}', ...row, lease: 'lease' in row ? `${row.lease}.${row.position}` : null,
  }))).execute();
  await migrateToLatest(db);
}

/** The same group kept as it was before ranged leases (a row an event, leased ones included), then migrated to the latest. */
export async function groupStateBeforeRanges(db: Kysely<any>): Promise<void> {
  const { error } = await createMigrator(db).migrateTo(BEFORE_RANGES);
  if (error) throw error;
  await fourEventsAndAGroup(db);
  const { id } = await db.selectFrom('consumer_groups').select('id').executeTakeFirstOrThrow();
  await db.insertInto('consumer_group_exceptions').values(FOUR_STATES.map((row) => ({
    group_id: id, stream_id: `pet-${row.position}`, deliveries: 1, not_before: null, lease: null, consumer: null, lease_expires_at: null, reason: null, parked_at: null, ...row,
  }))).execute();
  await migrateToLatest(db);
}

/** The moves of a group's state the migrations made, each with the state a store held before it: every backend's test runs them all. */
export const GROUP_STATE_MOVES = [
  ['when groups stop copying the log', groupStateBeforeTheMove],
  ['when fresh leases become ranges (those taken before stay a row an event)', groupStateBeforeRanges],
] as const;

/** What the migrated store must show: the lease still acks, the parked event and the retry are kept, the acked one never comes back. */
export async function checkGroupStateCarriedOver(store: SqlPetStore): Promise<void> {
  const groups = createSqlConsumerGroups(store);
  const ports = { consumerGroups: groups, eventLog: store.eventLog, clock: store.clock };
  const status = (await groups.group('k', 'g').status(store.clock.now()))!;
  assert.deepEqual({ checkpoint: status.checkpoint, inFlight: status.inFlight, parked: status.parked, takenTo: status.group.takenTo }, { checkpoint: 0, inFlight: 1, parked: 1, takenTo: 4 });
  assert.deepEqual(await ackEvents(ports, 'k', 'g', ['tokenA.1']), { done: [{ lease: 'tokenA.1' }], stale: [] }, 'the lease taken before the move acks');
  const claimed = await claimEvents(ports, 'k', 'g', 'c', 10);
  assert.ok(claimed && 'claims' in claimed);
  assert.deepEqual(claimed.claims.map((claim) => [claim.position, claim.deliveries, claim.event.streamId]), [[3, 2, 'pet-3']], 'the retry, its delivery counted; the acked event not again');
  await ackEvents(ports, 'k', 'g', claimed.claims.map((claim) => claim.lease));
  const parked = await groups.group('k', 'g').parked(0, 10, store.clock.now());
  assert.deepEqual(parked.map((event) => [event.position, event.reason, event.event.streamId]), [[2, 'parked by a nack on delivery 1', 'pet-2']]);
  assert.equal((await groups.group('k', 'g').status(store.clock.now()))!.checkpoint, 4);
}
