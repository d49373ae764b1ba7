import { it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ackEvents, addPet, changePetStatus, claimEvents, consumersWindowMs, createClaimWaits, createGroup, GroupLimitReached, GroupNotFound, GroupRequestRefused, replayParked,
} from '../../application/index.ts';
import type { Claim, ClaimOutcome, ConsumerGroupPorts, ConsumerGroups, EventLog, GroupSettings, PetStorePorts } from '../../application/index.ts';
import { createSqlConsumerGroups } from '../../adapters/store/tables/consumer-groups.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';

/** The limits a store's consumer groups are made with (the defaults: `GROUP_LIMITS`). */
export type GroupStoreLimits = Parameters<typeof createSqlConsumerGroups>[1];

/** One instance's store, as the rules use it: its pet ports and log, and its consumer groups made with some limits. */
export interface GroupStore {
  readonly ports: PetStorePorts;
  readonly eventLog: EventLog;
  consumerGroups(limits?: GroupStoreLimits): ConsumerGroups;
}

/** A SQL store as a `GroupStore`. */
export function sqlGroupStore(store: SqlPetStore): GroupStore {
  return { ports: store, eventLog: store.eventLog, consumerGroups: (limits) => createSqlConsumerGroups(store, limits) };
}

/** Two stores on one database, as two processes (SQLite) or two instances (PostgreSQL) would hold it; or one shared memory. */
export interface StorePair {
  readonly first: GroupStore;
  readonly second: GroupStore;
  close(): Promise<void>;
}

const OWNER = '1';
const SETTINGS: GroupSettings = { ackTimeoutMs: 1_000, maxDeliveries: 3, start: 'beginning' };

/** A clock the test moves by hand: lease expiry without waiting. */
function manualClock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => void (now += ms) };
}

function portsOn(store: GroupStore, clock: { now(): Date }, limits?: GroupStoreLimits): ConsumerGroupPorts {
  return { consumerGroups: store.consumerGroups(limits), eventLog: store.eventLog, clock };
}

/** `groups` with each write of a group (each one transaction of it) named in `writes` as it starts. */
function writesCounted(groups: ConsumerGroups, writes: string[]): ConsumerGroups {
  return {
    ...groups,
    group(ownerKeyId, name) {
      const handle = groups.group(ownerKeyId, name);
      return {
        ...handle,
        claim: (request) => (writes.push('claim'), handle.claim(request)),
        ack: (leases, now) => (writes.push('ack'), handle.ack(leases, now)),
        nack: (leases, now, then) => (writes.push('nack'), handle.nack(leases, now, then)),
        extend: (leases, now) => (writes.push('extend'), handle.extend(leases, now)),
      };
    },
  };
}

function claimsOf(outcome: ClaimOutcome | undefined): Claim[] {
  assert.ok(outcome && 'claims' in outcome, `claims expected, got ${JSON.stringify(outcome)}`);
  return outcome.claims;
}

async function addPets(store: GroupStore, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let index = 0; index < count; index++) ids.push((await addPet(store.ports, { name: `Pet ${index}`, categoryId: 1, status: 'available' })).id);
  return ids;
}

/** The consumer group rules, each against a fresh pair of stores from `open`. */
export function consumerGroupRules(open: () => Promise<StorePair>): void {
  const withPair = (name: string, test: (pair: StorePair) => Promise<void>) =>
    it(name, { timeout: 120_000 }, async () => {
      const pair = await open();
      try {
        await test(pair);
      } finally {
        await pair.close();
      }
    });

  withPair('a claim whose read of the log another claim overtook reads it again: it never answers nothing while events wait', async ({ first, second }) => {
    const clock = manualClock();
    const b = portsOn(second, clock);
    let overtake: (() => Promise<unknown>) | undefined;
    // The first read of the log by `a`'s claim: before it answers, `b` claims and moves the cursor past what it read.
    const eventLog: EventLog = {
      ...first.eventLog,
      readLog: async (query) => {
        const page = await first.eventLog.readLog(query);
        const other = overtake;
        overtake = undefined;
        await other?.();
        return page;
      },
    };
    const a: ConsumerGroupPorts = { ...portsOn(first, clock), eventLog };
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 4);
    overtake = () => claimEvents(b, OWNER, 'g', 'quick', 2);
    // A waiting claim's look (nobody marked seen) reads the log before deciding whether to write at all.
    const claimed = claimsOf(await claimEvents(a, OWNER, 'g', 'overtaken', 10, false));
    assert.deepEqual(claimed.map((claim) => claim.position), [3, 4], 'what the other claim left');
  });

  withPair('a claim that writes anyway (its consumer marked seen, acks carried) reads the log in its own transaction, not before it', async ({ first }) => {
    const clock = manualClock();
    let reads = 0;
    const eventLog: EventLog = { ...first.eventLog, readLog: (query) => ((reads += 1), first.eventLog.readLog(query)) };
    const a: ConsumerGroupPorts = { ...portsOn(first, clock), eventLog };
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 3);
    const batch = claimsOf(await claimEvents(a, OWNER, 'g', 'busy', 2));
    const next = await claimEvents(a, OWNER, 'g', 'busy', 2, true, batch.map((claim) => claim.lease));
    assert.deepEqual([batch.map((claim) => claim.position), claimsOf(next).map((claim) => claim.position), next?.acked?.done.length], [[1, 2], [3], 2]);
    assert.equal(reads, 0, 'no page of the log read outside the claim');
  });

  withPair('a lease not acked within ackTimeoutMs expires, counts as a delivery, and the event goes to another consumer', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    const b = portsOn(second, clock);
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 1);
    const [silent] = claimsOf(await claimEvents(a, OWNER, 'g', 'silent', 10));
    assert.equal(silent!.deliveries, 1);
    assert.deepEqual(claimsOf(await claimEvents(b, OWNER, 'g', 'other', 10)), [], 'held while the lease lives');
    clock.advance(SETTINGS.ackTimeoutMs + 1);
    const [again] = claimsOf(await claimEvents(b, OWNER, 'g', 'other', 10));
    assert.equal(again!.position, silent!.position);
    assert.equal(again!.deliveries, 2, 'the expired lease counted');
    assert.notEqual(again!.lease, silent!.lease);
    assert.deepEqual(await a.consumerGroups.group(OWNER, 'g').ack([silent!.lease], clock.now()), { done: [], stale: [silent!.lease] }, 'the expired lease acks nothing');
    assert.deepEqual((await b.consumerGroups.group(OWNER, 'g').ack([again!.lease], clock.now()))!.done, [{ lease: again!.lease }]);
  });

  withPair('an event whose leases expire maxDeliveries times is parked with a reason, read page by page, and replayed with deliveries from 1', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    const b = portsOn(second, clock);
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 3);
    for (let delivery = 1; delivery <= SETTINGS.maxDeliveries; delivery++) {
      const claims = claimsOf(await claimEvents(delivery % 2 ? a : b, OWNER, 'g', 'crashing', 10));
      assert.deepEqual(claims.map((claim) => claim.deliveries), [delivery, delivery, delivery]);
      clock.advance(SETTINGS.ackTimeoutMs + 1);
    }
    assert.deepEqual(claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10)), [], 'parked, not handed out a fourth time');
    const firstPage = await a.consumerGroups.group(OWNER, 'g').parked(0, 2, clock.now());
    const secondPage = await a.consumerGroups.group(OWNER, 'g').parked(firstPage.at(-1)!.position, 2, clock.now());
    assert.deepEqual([...firstPage, ...secondPage].map((parked) => [parked.position, parked.deliveries, parked.reason]), [1, 2, 3].map((position) => [position, 3, 'lease expired on delivery 3']));
    const status = (await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!;
    assert.deepEqual({ checkpoint: status.checkpoint, parked: status.parked, inFlight: status.inFlight }, { checkpoint: 3, parked: 3, inFlight: 0 }, 'parked events are settled');
    assert.equal(await replayParked(b, OWNER, 'g'), 3);
    const replayed = claimsOf(await claimEvents(b, OWNER, 'g', 'fixed', 10));
    assert.deepEqual(replayed.map((claim) => [claim.position, claim.deliveries]), [[1, 1], [2, 1], [3, 1]]);
    assert.equal((await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, 0, 'replayed events are unsettled again');
  });

  withPair('a nack hands the event out again after retryAfterMs, and parks it with park or once its deliveries are spent', async ({ first }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    await a.consumerGroups.create(OWNER, 'g', { ...SETTINGS, maxDeliveries: 2 }, 0, clock.now(), 10);
    await addPets(first, 2);
    const [one, two] = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    await a.consumerGroups.group(OWNER, 'g').nack([one!.lease], clock.now(), { notBefore: new Date(clock.now().getTime() + 500) });
    assert.deepEqual((await a.consumerGroups.group(OWNER, 'g').nack([two!.lease, 'nonsense'], clock.now(), { park: true }))!.stale, ['nonsense']);
    assert.deepEqual(claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10)), [], 'not before retryAfterMs');
    clock.advance(500);
    const [retried] = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    assert.deepEqual([retried!.position, retried!.deliveries], [one!.position, 2]);
    await a.consumerGroups.group(OWNER, 'g').nack([retried!.lease], clock.now(), { notBefore: clock.now() });
    const parked = await a.consumerGroups.group(OWNER, 'g').parked(0, 10, clock.now());
    assert.deepEqual(parked.map((event) => [event.position, event.reason]), [[1, 'nacked on delivery 2 of 2'], [2, 'parked by a nack on delivery 1']]);
  });

  withPair('a nack with release hands the events back at once without counting the delivery, even at maxDeliveries 1', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    const b = portsOn(second, clock);
    await a.consumerGroups.create(OWNER, 'g', { ...SETTINGS, maxDeliveries: 1 }, 0, clock.now(), 10);
    await addPets(first, 2);
    const claims = claimsOf(await claimEvents(a, OWNER, 'g', 'stopping', 10));
    const released = await a.consumerGroups.group(OWNER, 'g').nack(claims.map((claim) => claim.lease), clock.now(), { release: true });
    assert.deepEqual(released!.stale, []);
    const again = claimsOf(await claimEvents(b, OWNER, 'g', 'other', 10));
    assert.deepEqual(again.map((claim) => [claim.position, claim.deliveries]), claims.map((claim) => [claim.position, 1]));
    assert.equal((await b.consumerGroups.group(OWNER, 'g').status(clock.now()))!.parked, 0);
  });

  withPair('an event whose last delivery expires shows parked as of its expiry, before any claim, and stays so once a claim parks it', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    const b = portsOn(second, clock);
    await a.consumerGroups.create(OWNER, 'g', { ...SETTINGS, maxDeliveries: 1 }, 0, clock.now(), 10);
    await addPets(first, 1);
    const [claim] = claimsOf(await claimEvents(a, OWNER, 'g', 'dies', 10));
    clock.advance(SETTINGS.ackTimeoutMs + 1);
    const status = (await b.consumerGroups.group(OWNER, 'g').status(clock.now()))!;
    assert.deepEqual([status.parked, status.inFlight, status.checkpoint], [1, 0, 1], 'parked and settled with no claim since');
    const shown = await b.consumerGroups.group(OWNER, 'g').parked(0, 10, clock.now());
    assert.deepEqual(shown.map((event) => [event.position, event.reason, event.parkedAt]), [[claim!.position, 'lease expired on delivery 1', claim!.leaseExpiresAt]]);
    clock.advance(5_000);
    assert.deepEqual(claimsOf(await claimEvents(b, OWNER, 'g', 'other', 10)), []);
    assert.deepEqual(await b.consumerGroups.group(OWNER, 'g').parked(0, 10, clock.now()), shown, 'the same once a claim parked it');
    assert.equal(await replayParked(b, OWNER, 'g'), 1);
  });

  withPair('a consumer shows in its group from its claim, leased or not, with lastSeenAt, until its window passes', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    const b = portsOn(second, clock);
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 1);
    const claimedAt = clock.now().toISOString();
    assert.equal(claimsOf(await claimEvents(a, OWNER, 'g', 'busy', 10)).length, 1);
    clock.advance(10);
    const idleAt = clock.now().toISOString();
    assert.deepEqual(claimsOf(await claimEvents(b, OWNER, 'g', 'idle', 10)), []);
    assert.deepEqual((await b.consumerGroups.group(OWNER, 'g').status(clock.now()))!.consumers, [
      { consumer: 'busy', inFlight: 1, lastSeenAt: claimedAt }, { consumer: 'idle', inFlight: 0, lastSeenAt: idleAt },
    ]);
    clock.advance(consumersWindowMs(SETTINGS) + 1);
    assert.deepEqual((await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!.consumers, []);
  });

  withPair('a group shows a bounded number of consumers: a claim by one more is told when to try again', async ({ first }) => {
    const clock = manualClock();
    const a = { ...portsOn(first, clock), consumerGroups: first.consumerGroups({ inFlightPerGroup: 10, inFlightPerConsumer: 10, consumersPerGroup: 2 }) };
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    claimsOf(await claimEvents(a, OWNER, 'g', 'one', 10));
    claimsOf(await claimEvents(a, OWNER, 'g', 'two', 10));
    assert.deepEqual(await claimEvents(a, OWNER, 'g', 'three', 10), { full: 'consumers', retryAfterMs: consumersWindowMs(SETTINGS) });
    claimsOf(await claimEvents(a, OWNER, 'g', 'one', 10));
    clock.advance(consumersWindowMs(SETTINGS) + 1);
    claimsOf(await claimEvents(a, OWNER, 'g', 'three', 10));
  });

  withPair('pending says, in one read, whether an event could go now: taken in and ready, a retry fallen due, a lease expired', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    const b = portsOn(second, clock);
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    assert.equal((await b.consumerGroups.group(OWNER, 'nope').pending(clock.now()))?.due, undefined);
    await addPets(first, 1);
    assert.equal((await b.consumerGroups.group(OWNER, 'g').pending(clock.now()))?.due, false, 'in the log, not yet taken in');
    const [claim] = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    assert.equal((await b.consumerGroups.group(OWNER, 'g').pending(clock.now()))?.due, false, 'under a live lease');
    await a.consumerGroups.group(OWNER, 'g').nack([claim!.lease], clock.now(), { notBefore: new Date(clock.now().getTime() + 500) });
    assert.equal((await b.consumerGroups.group(OWNER, 'g').pending(clock.now()))?.due, false, 'not before its retry');
    clock.advance(500);
    assert.equal((await b.consumerGroups.group(OWNER, 'g').pending(clock.now()))?.due, true);
    claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    clock.advance(SETTINGS.ackTimeoutMs + 1);
    assert.equal((await b.consumerGroups.group(OWNER, 'g').pending(clock.now()))?.due, true, 'its lease expired');
  });

  withPair('a group holding its most parked events takes no more from the log until some are replayed', async ({ first }) => {
    const clock = manualClock();
    const a = { ...portsOn(first, clock), consumerGroups: first.consumerGroups({ inFlightPerGroup: 10, inFlightPerConsumer: 10, parkedPerGroup: 2 }) };
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 2);
    const poison = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    await a.consumerGroups.group(OWNER, 'g').nack(poison.map((claim) => claim.lease), clock.now(), { park: true });
    await addPets(first, 1);
    assert.deepEqual(claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10)), [], 'at its bound: nothing more taken in');
    assert.equal((await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, 2, 'its lag shows');
    assert.equal(await replayParked(a, OWNER, 'g', [poison[0]!.position]), 1);
    assert.deepEqual(claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10)).map((claim) => claim.position), [poison[0]!.position, 3]);
  });

  withPair('createGroup fills in the defaults, starts an `end` group at the head, and refuses a start past the head', async ({ first }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    await addPets(first, 2);
    const made = await createGroup(a, OWNER, 'defaults', {}, 10);
    assert.ok(made.outcome === 'created');
    assert.deepEqual([made.group.ackTimeoutMs, made.group.maxDeliveries, made.group.start, made.group.takenTo], [30_000, 5, 'beginning', 0]);
    const atEnd = await createGroup(a, OWNER, 'at-end', { start: 'end' }, 10);
    assert.ok(atEnd.outcome === 'created');
    assert.equal(atEnd.group.takenTo, 2);
    await assert.rejects(createGroup(a, OWNER, 'too-far', { start: 3 }, 10), GroupRequestRefused);
    assert.equal((await createGroup(a, OWNER, 'at-end', { start: 'end' }, 10)).outcome, 'exists', 'the same settings find it, wherever the head is now');
    await assert.rejects(ackEvents(a, OWNER, 'nope', ['x.1']), GroupNotFound);
  });

  withPair('the checkpoint is the contiguous settled floor, not the last event handed out or acked', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 4);
    const claims = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    assert.equal((await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, 0);
    await a.consumerGroups.group(OWNER, 'g').ack([claims[1]!.lease, claims[3]!.lease], clock.now());
    assert.equal((await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, 0, 'position 1 is still in flight');
    await a.consumerGroups.group(OWNER, 'g').ack([claims[0]!.lease], clock.now());
    const seenByTheOther = (await second.consumerGroups().group(OWNER, 'g').status(clock.now()))!;
    assert.equal(seenByTheOther.checkpoint, 2, 'up to the one still in flight, as the other instance reads it');
    assert.deepEqual(await second.consumerGroups().totals(clock.now()), { groups: 1, inFlight: 1, waiting: 0, parked: 0, lowestCheckpoint: 2 });
    clock.advance(SETTINGS.ackTimeoutMs + 1);
    assert.deepEqual(await a.consumerGroups.totals(clock.now()), { groups: 1, inFlight: 0, waiting: 1, parked: 0, lowestCheckpoint: 2 }, 'an expired lease waits');
  });

  withPair('an acked event is never handed out again, and a second ack of it is stale', async ({ first, second }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    const b = portsOn(second, clock);
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 2);
    const claims = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    const leases = claims.map((claim) => claim.lease);
    assert.deepEqual(await a.consumerGroups.group(OWNER, 'g').ack(leases, clock.now()), { done: leases.map((lease) => ({ lease })), stale: [] });
    assert.deepEqual((await b.consumerGroups.group(OWNER, 'g').ack(leases, clock.now()))!.stale, leases);
    clock.advance(10 * SETTINGS.ackTimeoutMs);
    assert.deepEqual(claimsOf(await claimEvents(b, OWNER, 'g', 'd', 10)), []);
    assert.equal((await b.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, 2);
  });

  withPair('extend gives held leases a new expiry and leaves expired ones stale', async ({ first }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 1);
    const [claim] = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    clock.advance(SETTINGS.ackTimeoutMs - 1);
    const extended = await a.consumerGroups.group(OWNER, 'g').extend([claim!.lease], clock.now());
    assert.equal(extended!.done[0]!.leaseExpiresAt, new Date(clock.now().getTime() + SETTINGS.ackTimeoutMs).toISOString());
    clock.advance(SETTINGS.ackTimeoutMs - 1);
    assert.deepEqual(claimsOf(await claimEvents(a, OWNER, 'g', 'd', 10)), [], 'still held after its first expiry');
    clock.advance(2);
    assert.deepEqual((await a.consumerGroups.group(OWNER, 'g').extend([claim!.lease], clock.now()))!.stale, [claim!.lease]);
  });

  withPair('per-pet order and one live lease hold under 4 consumers claiming through two instances at once', async ({ first, second }) => {
    const clock = manualClock();
    const instances = [portsOn(first, clock), portsOn(second, clock)];
    await instances[0]!.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    const pets = await addPets(first, 8);
    for (let round = 0; round < 4; round++) {
      for (const id of pets) await changePetStatus(first.ports, { id, status: round % 2 ? 'available' : 'pending' });
    }
    const total = pets.length * 5;
    const acked = new Set<number>();
    // An ack counts from when it is sent: its commit may come before its answer, and a claim of the other instance between them rightly sees it.
    const ackSent = new Set<number>();
    const held = new Map<number, string>();
    const order = new Map<string, number[]>();
    const firsts = claimsOf(await claimEvents(instances[0]!, OWNER, 'g', 'c0', 100));
    assert.deepEqual(firsts.map((claim) => claim.position), [1, 2, 3, 4, 5, 6, 7, 8], 'only the first unsettled event of each pet');
    await instances[0]!.consumerGroups.group(OWNER, 'g').ack(firsts.map((claim) => claim.lease), clock.now());
    for (const claim of firsts) {
      acked.add(claim.position);
      ackSent.add(claim.position);
      order.set(claim.event.streamId, [claim.position]);
    }
    let random = 7;
    const consumer = async (index: number) => {
      const ports = instances[index % 2]!;
      while (acked.size < total) {
        const claims = claimsOf(await claimEvents(ports, OWNER, 'g', `c${index}`, 3));
        for (const claim of claims) {
          assert.equal(held.get(claim.position), undefined, `position ${claim.position} handed to c${index} while held by ${held.get(claim.position)}`);
          assert.ok(!acked.has(claim.position), `position ${claim.position} handed out after its ack`);
          held.set(claim.position, `c${index}`);
          const seen = order.get(claim.event.streamId) ?? [];
          for (const earlier of seen) assert.ok(ackSent.has(earlier), `${claim.event.streamId}: ${claim.position} handed out before ${earlier} was acked`);
          seen.push(claim.position);
          order.set(claim.event.streamId, seen);
        }
        // Ack in a shuffled order, yielding between acks so that the other consumers claim meanwhile.
        random = (random * 48271) % 2147483647;
        for (const claim of random % 2 ? claims : [...claims].reverse()) {
          await new Promise((resolve) => setImmediate(resolve));
          held.delete(claim.position);
          ackSent.add(claim.position);
          const { done } = (await ports.consumerGroups.group(OWNER, 'g').ack([claim.lease], clock.now()))!;
          assert.equal(done.length, 1);
          acked.add(claim.position);
        }
        if (claims.length === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all([0, 1, 2, 3].map(consumer));
    assert.equal(acked.size, total);
    for (const positions of order.values()) assert.deepEqual(positions, [...positions].sort((x, y) => x - y), 'each pet in log order');
    assert.equal((await instances[1]!.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, total);
  });

  withPair('a claim carrying acks commits them in its own transaction, counts the room they free, and keeps them when it meets a cap', async ({ first }) => {
    const clock = manualClock();
    const writes: string[] = [];
    const groups = writesCounted(first.consumerGroups({ inFlightPerGroup: 5, inFlightPerConsumer: 3, consumersPerGroup: 1 }), writes);
    const a = { ...portsOn(first, clock), consumerGroups: groups, commits: { onCommitted: () => () => undefined } };
    await groups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 8);
    const waits = createClaimWaits(a, { recheckMs: 60_000 });
    const batch = claimsOf(await waits.claim(OWNER, 'g', 'one', 10, { waitMs: 0 }));
    assert.equal(batch.length, 3, 'up to the consumer cap');
    writes.length = 0;
    const next = await waits.claim(OWNER, 'g', 'one', 10, { waitMs: 0, acks: [...batch.map((claim) => claim.lease), 'unknown.1'] });
    assert.deepEqual(writes, ['claim'], 'one write of the group: the acks ride in the claim\'s transaction');
    assert.deepEqual(next?.acked, { done: batch.map((claim) => ({ lease: claim.lease })), stale: ['unknown.1'] });
    assert.deepEqual(claimsOf(next).map((claim) => claim.position), [4, 5, 6], 'the room the acks freed is counted');
    writes.length = 0;
    const refused = await waits.claim(OWNER, 'g', 'two', 10, { waitMs: 0, acks: [claimsOf(next)[0]!.lease] });
    assert.deepEqual(refused, { full: 'consumers', retryAfterMs: consumersWindowMs(SETTINGS), acked: { done: [{ lease: claimsOf(next)[0]!.lease }], stale: [] } });
    assert.deepEqual(writes, ['claim']);
    const status = await groups.group(OWNER, 'g').status(clock.now());
    assert.deepEqual([status?.checkpoint, status?.inFlight], [4, 2], 'acked at the cap all the same');
  });

  withPair('past the in-flight cap of the group or the consumer, a claim is told so with when a lease frees up', async ({ first }) => {
    const clock = manualClock();
    const a = portsOn(first, clock, { inFlightPerGroup: 5, inFlightPerConsumer: 3 });
    await a.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    await addPets(first, 8);
    assert.equal(claimsOf(await claimEvents(a, OWNER, 'g', 'one', 10)).length, 3, 'up to the consumer cap');
    assert.deepEqual(await claimEvents(a, OWNER, 'g', 'one', 10), { full: 'consumer', retryAfterMs: SETTINGS.ackTimeoutMs });
    assert.equal(claimsOf(await claimEvents(a, OWNER, 'g', 'two', 10)).length, 2, 'up to the group cap');
    clock.advance(100);
    assert.deepEqual(await claimEvents(a, OWNER, 'g', 'three', 10), { full: 'group', retryAfterMs: SETTINGS.ackTimeoutMs - 100 });
  });

  withPair('a key has a bounded number of groups; the same settings find the group, others conflict; another key sees none of them', async ({ first }) => {
    const clock = manualClock();
    const { consumerGroups } = portsOn(first, clock);
    assert.equal((await consumerGroups.create(OWNER, 'a', SETTINGS, 0, clock.now(), 2)).outcome, 'created');
    assert.equal((await consumerGroups.create(OWNER, 'a', SETTINGS, 0, clock.now(), 2)).outcome, 'exists');
    assert.equal((await consumerGroups.create(OWNER, 'a', { ...SETTINGS, maxDeliveries: 9 }, 0, clock.now(), 2)).outcome, 'conflict');
    assert.equal((await consumerGroups.create(OWNER, 'b', SETTINGS, 0, clock.now(), 2)).outcome, 'created');
    await assert.rejects(consumerGroups.create(OWNER, 'c', SETTINGS, 0, clock.now(), 2), GroupLimitReached);
    assert.equal((await consumerGroups.create('2', 'a', SETTINGS, 0, clock.now(), 2)).outcome, 'created', 'names are per key');
    assert.deepEqual((await consumerGroups.list(OWNER)).map((group) => group.name), ['a', 'b']);
    assert.equal(await consumerGroups.group('3', 'a').get(), undefined);
    assert.equal(await consumerGroups.group(OWNER, 'a').delete(), true);
    assert.equal(await consumerGroups.group(OWNER, 'a').get(), undefined);
    assert.equal((await consumerGroups.group('2', 'a').get())?.name, 'a', 'another key\'s group of that name stays');
  });

  withPair('a group with types takes only those, and its checkpoint passes the events it does not want', async ({ first }) => {
    const clock = manualClock();
    const a = portsOn(first, clock);
    await a.consumerGroups.create(OWNER, 'g', { ...SETTINGS, types: ['PetStatusChanged'] }, 0, clock.now(), 10);
    const [id] = await addPets(first, 2);
    await changePetStatus(first.ports, { id: id!, status: 'sold' });
    const claims = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    assert.deepEqual(claims.map((claim) => [claim.position, claim.event.event.type]), [[3, 'PetStatusChanged']]);
    await a.consumerGroups.group(OWNER, 'g').ack([claims[0]!.lease], clock.now());
    assert.equal((await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, 3);
  });

  withPair('a claim moves a group with types past the events of other types it read, so that no later claim reads them again', async ({ first, second }) => {
    const clock = manualClock();
    const afters: number[] = [];
    const eventLog: EventLog = { ...first.eventLog, readLog: (query) => (afters.push(query.after), first.eventLog.readLog(query)) };
    const a: ConsumerGroupPorts = { ...portsOn(first, clock), eventLog };
    await a.consumerGroups.create(OWNER, 'g', { ...SETTINGS, types: ['PetStatusChanged'] }, 0, clock.now(), 10);
    const ids = await addPets(second, 5);
    assert.deepEqual(claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10)), []);
    assert.equal((await a.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, 5, 'the cursor passed the 5 creations');
    // A waiting claim's look reads the log outside the claim: from past them.
    assert.deepEqual(claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10, false)), []);
    assert.deepEqual(afters, [5]);
    await changePetStatus(second.ports, { id: ids[2]!, status: 'sold' });
    const claims = claimsOf(await claimEvents(a, OWNER, 'g', 'c', 10));
    assert.deepEqual(claims.map((claim) => [claim.position, claim.event.event.type]), [[6, 'PetStatusChanged']], 'nothing of its types skipped');
  });

  withPair('nothing is skipped while both instances commit as consumers claim: every event of the log is acked once', async ({ first, second }) => {
    const clock = manualClock();
    const instances = [portsOn(first, clock), portsOn(second, clock)];
    await instances[0]!.consumerGroups.create(OWNER, 'g', SETTINGS, 0, clock.now(), 10);
    let writing = true;
    const writer = async (store: GroupStore) => {
      for (let written = 0; written < 30; written += 3) await Promise.all([0, 1, 2].map(() => addPet(store.ports, { name: 'Racing', categoryId: 1 })));
    };
    const acked = new Map<number, number>();
    const consumer = async (index: number) => {
      const ports = instances[index % 2]!;
      for (let idle = 0; idle < 3;) {
        const claims = claimsOf(await claimEvents(ports, OWNER, 'g', `c${index}`, 5));
        if (claims.length === 0) {
          // Empty only once the writers are done and the log is drained, three looks in a row.
          if (!writing) idle++;
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        idle = 0;
        const { done } = (await ports.consumerGroups.group(OWNER, 'g').ack(claims.map((claim) => claim.lease), clock.now()))!;
        for (const { lease } of done) {
          const position = claims.find((claim) => claim.lease === lease)!.position;
          acked.set(position, (acked.get(position) ?? 0) + 1);
        }
      }
    };
    const writers = Promise.all([writer(first), writer(second)]);
    const consumers = Promise.all([0, 1, 2, 3].map(consumer));
    await writers;
    writing = false;
    await consumers;
    const log = await first.eventLog.readLog({ after: 0, limit: 100_000 });
    assert.ok(log.length >= 40);
    assert.deepEqual([...acked.keys()].sort((a, b) => a - b), log.map((stored) => stored.position), 'every committed event handed out and acked');
    assert.deepEqual([...acked.values()].filter((count) => count !== 1), []);
    assert.equal((await instances[1]!.consumerGroups.group(OWNER, 'g').status(clock.now()))!.checkpoint, log.at(-1)!.position);
  });
}
