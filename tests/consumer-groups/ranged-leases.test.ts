import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, changePetStatus, claimEvents } from '../../application/index.ts';
import type { Claim, ConsumerGroups } from '../../application/index.ts';
import type { KyselyPlugin } from 'kysely';
import { createSqlConsumerGroups } from '../../adapters/store/tables/consumer-groups.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';
import { cloudEventJson } from '../../contract/cloud-events.ts';

const ACK_TIMEOUT_MS = 30_000;

/** A SQLite store with a group of every type from the beginning, and what its tables hold. */
async function openGroup() {
  const opened = await openTemporaryStore('sqlite');
  const { store } = opened;
  // Counts the statements the group's transactions run (each statement's result passes every plugin once).
  let statements = 0;
  const counter: KyselyPlugin = {
    transformQuery: ({ node }) => node,
    transformResult: async ({ result }) => {
      statements += 1;
      return result;
    },
  };
  const writeOutsideLog = store.writeOutsideLog;
  assert.ok(writeOutsideLog, 'a SQLite store writes its groups beside the log');
  const groups = createSqlConsumerGroups({ ...store, writeOutsideLog: (work) => writeOutsideLog((on) => work(on.withPlugin(counter))) });
  await groups.create('1', 'g', { ackTimeoutMs: ACK_TIMEOUT_MS, maxDeliveries: 5, start: 'beginning' }, 0, store.clock.now(), 10);
  const group = groups.group('1', 'g');
  const rows = async () => ({
    ranges: (await store.db.selectFrom('consumer_group_leases').select(['from_position', 'to_position', 'events']).orderBy('from_position').execute())
      .map((row) => [Number(row.from_position), Number(row.to_position), row.events]),
    events: (await store.db.selectFrom('consumer_group_exceptions').select(['position', 'state']).orderBy('position').execute())
      .map((row) => [Number(row.position), row.state]),
  });
  const claim = async (consumer: string, max: number, now = new Date()) => {
    const answer = await group.claim({ consumer, max, now, seen: true, fresh: { after: -1, holdRoom: 100 } });
    assert.ok(answer && 'claims' in answer);
    return answer.claims;
  };
  const positions = (claims: readonly Claim[]) => claims.map((claim) => claim.position);
  const leases = (claims: readonly Claim[], ...at: number[]) => claims.filter((claim) => at.includes(claim.position)).map((claim) => claim.lease);
  const counted = async <T>(work: () => Promise<T>) => {
    const before = statements;
    await work();
    return statements - before;
  };
  return { opened, store, group, rows, claim, positions, leases, counted };
}

describe('fresh events leased as ranges of the log (SQLite)', () => {
  it('a claim of fresh events writes one row, and an ack of them all deletes it', async () => {
    const { opened, store, group, rows, claim, positions } = await openGroup();
    try {
      for (let index = 0; index < 6; index++) await addPet(store, { name: `Pet ${index}`, categoryId: 1 });
      const claims = await claim('a', 10);
      assert.deepEqual(positions(claims), [1, 2, 3, 4, 5, 6]);
      assert.deepEqual(await rows(), { ranges: [[1, 6, 6]], events: [] }, 'one row for the six leased events, none of its own for any');
      const status = (await group.status(new Date()))!;
      assert.deepEqual({ inFlight: status.inFlight, unsettled: status.unsettled, checkpoint: status.checkpoint }, { inFlight: 6, unsettled: 6, checkpoint: 0 });
      assert.deepEqual((await group.pending(new Date()))!.unsettled, 6);
      const acked = (await group.ack(claims.map((each) => each.lease), new Date()))!;
      assert.equal(acked.done.length, 6);
      assert.deepEqual(await rows(), { ranges: [], events: [] });
      assert.equal((await group.status(new Date()))!.checkpoint, 6);
      assert.deepEqual(await claim('a', 10), [], 'an acked event is never handed out again');
    } finally {
      await opened.close();
    }
  });

  it('an ack of a whole claim deletes its range in one statement beyond its group\'s read, which says whether any range expired', async () => {
    const { opened, store, group, rows, claim, counted } = await openGroup();
    try {
      for (let index = 0; index < 5; index++) await addPet(store, { name: `Pet ${index}`, categoryId: 1 });
      const claims = await claim('a', 10);
      const any = await counted(() => group.ack([], new Date()));
      assert.equal(any, 1, 'with no range expired, an ack reads its group (locked) and nothing more');
      const whole = await counted(() => group.ack(claims.map((each) => each.lease), new Date()));
      assert.equal(whole - any, 1);
      assert.deepEqual(await rows(), { ranges: [], events: [] });
    } finally {
      await opened.close();
    }
  });

  it('a claim of a group holding no event row asks nothing of rows: three statements fewer than with one held back', async () => {
    const { opened, store, group, rows, claim, counted } = await openGroup();
    try {
      for (let index = 0; index < 3; index++) await addPet(store, { name: `Pet ${index}`, categoryId: 1 });
      await claim('a', 10);
      const drainedInOrder = await counted(() => claim('a', 10));
      assert.deepEqual((await rows()).events, [], 'its leases are a range: no event row');
      // An event of pet 1 past the range waits for it: the group now holds a row.
      await changePetStatus(store, { id: 1, status: 'sold' });
      await claim('a', 10);
      assert.deepEqual((await rows()).events, [[4, 'ready']]);
      const holdingRow = await counted(() => claim('a', 10));
      // Parking spent leases, and the ready and the expired waiting events (the parked count only with fresh events).
      assert.equal(holdingRow - drainedInOrder, 3);
    } finally {
      await opened.close();
    }
  });

  it('a claim whose fresh events are each their pet\'s first asks nothing about earlier events of their pets: one statement fewer', async () => {
    const { opened, store, group, rows, claim, counted } = await openGroup();
    try {
      assert.deepEqual(await claim('a', 10), [], 'the consumer seen once: the claims below count the same statements for it');
      const pet = await addPet(store, { name: 'A', categoryId: 1 });
      let claims: Claim[] = [];
      const first = await counted(async () => (claims = await claim('a', 10)));
      await group.ack(claims.map((each) => each.lease), new Date());
      await changePetStatus(store, { id: pet.id, status: 'sold' });
      const later = await counted(async () => (claims = await claim('a', 10)));
      assert.deepEqual(claims.map((each) => each.event.streamVersion), [2]);
      assert.deepEqual(await rows(), { ranges: [[2, 2, 1]], events: [] }, 'both claims wrote the same: a range and the cursor');
      assert.equal(later - first, 1, 'only the pet\'s second event asks whether an earlier one is unsettled');
      // The group locked (with how many events it holds unsettled), the consumer seen, the live leases, the log's page (with its end), the range, the cursor.
      assert.equal(first, 6);
    } finally {
      await opened.close();
    }
  });

  it('a busy consumer\'s claim learns with the group\'s lock when it was last seen and that no cap is near: two statements fewer, its row written once a second', async () => {
    const { opened, store, group, counted } = await openGroup();
    try {
      const started = Date.now();
      // As a claim runs: the group's page and its hold room read in its own transaction.
      const claimAt = async (ms: number) => {
        const answer = await group.claim({ consumer: 'a', max: 10, now: new Date(started + ms), seen: true, fresh: { after: -1 } });
        assert.ok(answer && 'claims' in answer && answer.claims.length === 1);
      };
      await addPet(store, { name: 'A', categoryId: 1 });
      await claimAt(0);
      await addPet(store, { name: 'B', categoryId: 1 });
      // The group locked (its unsettled events, when the consumer was seen), the log's page, the range, the cursor.
      assert.equal(await counted(() => claimAt(500)), 4, 'seen half a second ago, and 1 event unsettled with 10 asked: far from every cap');
      await addPet(store, { name: 'C', categoryId: 1 });
      assert.equal(await counted(() => claimAt(1_200)), 5, 'seen more than a second ago: seen again');
      const seen = await store.db.selectFrom('consumer_group_consumers').select('last_seen_at').executeTakeFirstOrThrow();
      assert.equal(seen.last_seen_at, new Date(started + 1_200).toISOString());
    } finally {
      await opened.close();
    }
  });

  it('a claim hands out fresh events as the log stores their data, never parsed; one stored in an older shape is brought to today\'s', async () => {
    const { opened, store, group } = await openGroup();
    try {
      await addPet(store, { name: 'Rex "the dog" \u{1F436}', categoryId: 1 });
      // PetAdded as shape 1 stored it: no status (today's shape says null).
      const metadata = JSON.stringify({ schemaVersion: 1, recordedAt: new Date(0).toISOString(), requestId: 'r', apiKeyId: 'k' });
      await store.db.insertInto('events').values({ stream_id: 'pet-99', stream_version: 1, type: 'PetAdded', data: '{"id":99,"name":"Old","categoryId":1}', metadata, recorded_at: new Date(0).toISOString() }).execute();
      const answer = await group.claim({ consumer: 'a', max: 10, now: new Date(), seen: true, fresh: { after: -1 } });
      assert.ok(answer && 'claims' in answer);
      const [today, older] = answer.claims.map((claim) => claim.event);
      const stored = await store.db.selectFrom('events').select('data').where('position', '=', today!.position).executeTakeFirstOrThrow();
      assert.deepEqual([today!.text?.type, today!.text?.dataJson], ['PetAdded', stored.data]);
      const [read] = await store.eventLog.readLog({ after: 0, limit: 1 });
      assert.equal(cloudEventJson(today!, 'http://x/v1'), cloudEventJson(read!, 'http://x/v1'), 'the same text as the feed writes');
      assert.deepEqual(today!.event, read!.event);
      assert.equal(older!.text, undefined);
      assert.deepEqual(older!.event, { type: 'PetAdded', data: { id: 99, name: 'Old', categoryId: 1, status: null } });
    } finally {
      await opened.close();
    }
  });

  it('a claim that writes reads its group and the log in its own transaction only, nothing before it', async () => {
    const { opened, store, group } = await openGroup();
    try {
      await addPet(store, { name: 'A', categoryId: 1 });
      let pendingReads = 0;
      const groups = { group: () => ({ ...group, pending: (now: Date) => ((pendingReads += 1), group.pending(now)) }) } as unknown as ConsumerGroups;
      const ports = { consumerGroups: groups, eventLog: store.eventLog, clock: store.clock };
      const answer = await claimEvents(ports, '1', 'g', 'a', 10);
      assert.ok(answer && 'claims' in answer);
      assert.deepEqual(answer.claims.map((each) => each.position), [1]);
      assert.equal(pendingReads, 0);
      const carried = await claimEvents(ports, '1', 'g', 'a', 10, false, answer.claims.map((each) => each.lease));
      assert.equal(carried?.acked?.done.length, 1);
      assert.equal(pendingReads, 0, 'a claim carrying acks writes too');
      await claimEvents(ports, '1', 'g', 'a', 10, false);
      assert.equal(pendingReads, 1, 'a look that marks nobody seen and acks nothing reads first, and takes the writer only when something can go');
    } finally {
      await opened.close();
    }
  });

  it('an event held behind its pet splits the range; a partial ack keeps the rest leased one row an event', async () => {
    const { opened, store, group, rows, claim, positions, leases } = await openGroup();
    try {
      const first = await addPet(store, { name: 'A', categoryId: 1 });
      await addPet(store, { name: 'B', categoryId: 1 });
      await changePetStatus(store, { id: first.id, status: 'sold' });
      await addPet(store, { name: 'C', categoryId: 1 });
      const claims = await claim('a', 10);
      assert.deepEqual(positions(claims), [1, 2, 4], 'the pet\'s second event waits for its first');
      assert.deepEqual(await rows(), { ranges: [[1, 2, 2], [4, 4, 1]], events: [[3, 'ready']] });
      assert.deepEqual(await claim('b', 10), [], 'nothing goes while the pet\'s first event is leased in a range');
      assert.deepEqual((await group.ack(leases(claims, 1), new Date()))!.done.length, 1);
      assert.deepEqual(await rows(), { ranges: [[4, 4, 1]], events: [[2, 'leased'], [3, 'ready']] });
      assert.deepEqual(positions(await claim('b', 10)), [3], 'once the first is acked, the second goes');
      const stale = (await group.ack(leases(claims, 1, 2, 4), new Date()))!;
      assert.deepEqual({ done: stale.done.length, stale: stale.stale }, { done: 2, stale: leases(claims, 1) });
    } finally {
      await opened.close();
    }
  });

  it('a fresh event whose pet has an event in a live range waits for it, across claims', async () => {
    const { opened, store, rows, claim, positions, leases, group } = await openGroup();
    try {
      const pet = await addPet(store, { name: 'A', categoryId: 1 });
      const claims = await claim('a', 1);
      await changePetStatus(store, { id: pet.id, status: 'sold' });
      await addPet(store, { name: 'B', categoryId: 1 });
      assert.deepEqual(positions(await claim('b', 10)), [3]);
      assert.deepEqual(await rows(), { ranges: [[1, 1, 1], [3, 3, 1]], events: [[2, 'ready']] });
      await group.ack(leases(claims, 1), new Date());
      assert.deepEqual(positions(await claim('a', 10)), [2]);
    } finally {
      await opened.close();
    }
  });

  it('an expired range is handed out again event by event, each delivery counted; its stale acks do nothing', async () => {
    const { opened, store, group, rows, claim, positions } = await openGroup();
    try {
      for (let index = 0; index < 3; index++) await addPet(store, { name: `Pet ${index}`, categoryId: 1 });
      const claims = await claim('a', 10);
      const later = new Date(Date.now() + ACK_TIMEOUT_MS + 1000);
      const again = await claim('b', 2, later);
      assert.deepEqual(again.map((each) => [each.position, each.deliveries]), [[1, 2], [2, 2]]);
      assert.deepEqual(await rows(), { ranges: [], events: [[1, 'leased'], [2, 'leased'], [3, 'leased']] });
      const acked = (await group.ack(claims.map((each) => each.lease), later))!;
      assert.deepEqual({ done: acked.done.length, stale: acked.stale.length }, { done: 0, stale: 3 });
      assert.deepEqual(positions(await claim('c', 10, later)), [3]);
    } finally {
      await opened.close();
    }
  });

  it('nack and extend act on the events they name, the rest of the range still leased', async () => {
    const { opened, store, group, rows, claim, leases } = await openGroup();
    try {
      for (let index = 0; index < 4; index++) await addPet(store, { name: `Pet ${index}`, categoryId: 1 });
      const claims = await claim('a', 10);
      assert.equal((await group.nack(leases(claims, 2), new Date(), { park: true }))!.done.length, 1);
      assert.deepEqual(await rows(), { ranges: [], events: [[1, 'leased'], [2, 'parked'], [3, 'leased'], [4, 'leased']] });
      const extended = (await group.extend(leases(claims, 3), new Date(Date.now() + 1000)))!;
      assert.equal(extended.done.length, 1);
      assert.equal((await group.ack(leases(claims, 1, 3, 4), new Date()))!.done.length, 3);
      const status = (await group.status(new Date()))!;
      assert.deepEqual({ inFlight: status.inFlight, parked: status.parked, checkpoint: status.checkpoint }, { inFlight: 0, parked: 1, checkpoint: 4 });
    } finally {
      await opened.close();
    }
  });
});
