import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, changePetStatus, claimEventsWaiting, createClaimWaits } from '../../application/index.ts';
import { createSqlConsumerGroups } from '../../adapters/store/tables/consumer-groups.ts';
import { stepClocks } from '../support/stepped-clocks.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';

/** The store's ports for claims, with a promise of the claim's first look at the group. */
async function openWatched() {
  const opened = await openTemporaryStore('sqlite');
  const { store } = opened;
  let looked!: () => void;
  const firstLook = new Promise<void>((resolve) => (looked = resolve));
  const groups = createSqlConsumerGroups(store);
  const consumerGroups: typeof groups = {
    ...groups,
    group(ownerKeyId, name) {
      const group = groups.group(ownerKeyId, name);
      return { ...group, claim: (request) => group.claim(request).finally(() => looked()) };
    },
  };
  const ports = { consumerGroups, eventLog: store.eventLog, clock: store.clock, commits: store.commits };
  await ports.consumerGroups.create('1', 'g', { ackTimeoutMs: 30_000, maxDeliveries: 5, start: 'end' }, 0, new Date(), 10);
  return { opened, ports, firstLook };
}

describe('a claim that waits for events', () => {
  it('wakes on the next commit, not on its next look (a minute away)', { timeout: 20_000 }, async () => {
    const { opened, ports, firstLook } = await openWatched();
    try {
      const waiting = claimEventsWaiting(ports, '1', 'g', 'c', 10, { waitMs: 30_000, recheckMs: 60_000 });
      await firstLook;
      const pet = await addPet(opened.store, { name: 'Awaited', categoryId: 1 });
      const outcome = await waiting;
      assert.ok(outcome && 'claims' in outcome);
      assert.deepEqual(outcome.claims.map((claim) => claim.event.streamId), [`pet-${pet.id}`]);
    } finally {
      await opened.close();
    }
  });

  it('answers what it has, nothing, as soon as its signal aborts (the client went away, the service stops)', { timeout: 20_000 }, async () => {
    const { opened, ports, firstLook } = await openWatched();
    try {
      const stop = new AbortController();
      const waiting = claimEventsWaiting(ports, '1', 'g', 'c', 10, { waitMs: 30_000, recheckMs: 60_000, signal: stop.signal });
      await firstLook;
      stop.abort();
      assert.deepEqual(await waiting, { claims: [] });
    } finally {
      await opened.close();
    }
  });

  it('a wall clock stepped back an hour does not stretch its wait: it ends after waitMs', { timeout: 20_000 }, async () => {
    const { opened, ports, firstLook } = await openWatched();
    const clocks = stepClocks();
    try {
      const waiting = claimEventsWaiting(ports, '1', 'g', 'c', 10, { waitMs: 200, recheckMs: 60_000 });
      await firstLook;
      clocks.stepWall(-3_600_000);
      assert.deepEqual(await waiting, { claims: [] });
    } finally {
      clocks.restore();
      await opened.close();
    }
  });

  it('a wall clock stepped forward an hour does not end its wait: the next commit is still handed out', { timeout: 20_000 }, async () => {
    const { opened, ports, firstLook } = await openWatched();
    const clocks = stepClocks();
    try {
      const waiting = claimEventsWaiting(ports, '1', 'g', 'c', 10, { waitMs: 30_000, recheckMs: 60_000 });
      await firstLook;
      clocks.stepWall(3_600_000);
      const pet = await addPet(opened.store, { name: 'Awaited', categoryId: 1 });
      const outcome = await waiting;
      assert.ok(outcome && 'claims' in outcome);
      assert.deepEqual(outcome.claims.map((claim) => claim.event.streamId), [`pet-${pet.id}`]);
    } finally {
      clocks.restore();
      await opened.close();
    }
  });

  it('an idle group costs one look a wake however many claims wait on it, and a commit of a type it does not take costs it nothing', { timeout: 20_000 }, async () => {
    const opened = await openTemporaryStore('sqlite');
    const { store } = opened;
    const groups = createSqlConsumerGroups(store);
    const calls = { pending: 0, claim: 0 };
    let claimed!: () => void;
    const firstLooksDone = new Promise<void>((resolve) => (claimed = resolve));
    const counted: typeof groups = {
      ...groups,
      group(ownerKeyId, name) {
        const group = groups.group(ownerKeyId, name);
        return {
          ...group,
          pending: (now) => ((calls.pending += 1), group.pending(now)),
          claim: async (request) => {
            calls.claim += 1;
            const outcome = await group.claim(request);
            if (calls.claim === 10) claimed();
            return outcome;
          },
        };
      },
    };
    const waits = createClaimWaits({ consumerGroups: counted, eventLog: store.eventLog, clock: store.clock, commits: store.commits }, { recheckMs: 60_000 });
    const stop = new AbortController();
    try {
      await groups.create('1', 'g', { ackTimeoutMs: 30_000, maxDeliveries: 5, start: 'end', types: ['PetStatusChanged'] }, 0, new Date(), 10);
      const waiting = Array.from({ length: 10 }, (_, index) => waits.claim('1', 'g', `c${index}`, 10, { waitMs: 30_000, signal: stop.signal }));
      await firstLooksDone;
      await new Promise((resolve) => setImmediate(resolve));
      const before = { ...calls };
      // Commits of a type the group does not take: no waiter looks, nothing is read or written for it.
      const pet = await addPet(store, { name: 'Not wanted', categoryId: 1 });
      await addPet(store, { name: 'Not wanted either', categoryId: 1 });
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      const spent = { pending: calls.pending - before.pending, claim: calls.claim - before.claim };
      assert.deepEqual(spent, { pending: 0, claim: 0 });
      // A change made here wakes the group: one look answers for all ten waiters, and finding nothing due, it writes nothing.
      waits.changed('1', 'g');
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      const woken = { pending: calls.pending - before.pending, claim: calls.claim - before.claim };
      assert.deepEqual(woken, { pending: 1, claim: 0 });
      // One it wants goes to the first waiter.
      await changePetStatus(store, { id: pet.id, status: 'sold' });
      const first = await waiting[0];
      assert.ok(first && 'claims' in first);
      assert.deepEqual(first.claims.map((claim) => claim.event.event.type), ['PetStatusChanged']);
      stop.abort();
      assert.deepEqual(await Promise.all(waiting.slice(1)), Array.from({ length: 9 }, () => ({ claims: [] })));
    } finally {
      stop.abort();
      await opened.close();
    }
  });

  it('a claim that carries the last batch\'s acks commits them and the claim in one transaction on SQLite\'s writer (one fsync a batch)', { timeout: 20_000 }, async () => {
    const opened = await openTemporaryStore('sqlite');
    const { store } = opened;
    let transactions = 0;
    const groups = createSqlConsumerGroups({
      db: store.db, dialect: store.dialect,
      writeOutsideLog: (work) => ((transactions += 1), store.writeOutsideLog!(work)),
    });
    const waits = createClaimWaits({ consumerGroups: groups, eventLog: store.eventLog, clock: store.clock, commits: store.commits }, { recheckMs: 60_000 });
    try {
      await groups.create('1', 'g', { ackTimeoutMs: 30_000, maxDeliveries: 5, start: 'beginning' }, 0, new Date(), 10);
      for (let index = 0; index < 4; index++) await addPet(store, { name: `Batch ${index}`, categoryId: 1 });
      const first = await waits.claim('1', 'g', 'busy', 2, { waitMs: 0 });
      assert.ok(first && 'claims' in first);
      transactions = 0;
      const next = await waits.claim('1', 'g', 'busy', 2, { waitMs: 0, acks: first.claims.map((claim) => claim.lease) });
      assert.ok(next && 'claims' in next);
      assert.deepEqual([next.acked?.done.length, next.claims.map((claim) => claim.position)], [2, [3, 4]]);
      assert.equal(transactions, 1, 'the acks and the claim commit together');
    } finally {
      await opened.close();
    }
  });
});
