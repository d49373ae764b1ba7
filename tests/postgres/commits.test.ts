import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, changePetStatus, StoreUnavailable } from '../../application/index.ts';
import type { Commit, LogQuery, RowChange, StoredEvent } from '../../application/index.ts';
import { LOOK_BOUND_MS, postgresCommits, readLogHead } from '../../adapters/store/postgres/postgres-commits.ts';
import type { PostgresCommits } from '../../adapters/store/postgres/postgres-commits.ts';
import { openTestPostgresStore, testPostgresEngine } from '../support/postgres.ts';
import type { TestStore } from '../support/postgres.ts';

/** One turn of the event loop: what was set to run in this turn's check phase runs first. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe(`the commits on PostgreSQL, read from the log (${testPostgresEngine()})`, () => {
  let opened: TestStore;
  const opens: PostgresCommits[] = [];
  afterEach(async () => {
    for (const commits of opens.splice(0)) await commits.close();
  });

  before(async () => {
    opened = await openTestPostgresStore();
  });
  after(() => opened.close());

  /**
   * The commits over the test store (no LISTEN, the head polled once an hour), counting what its looks
   * ask: `looks` where the log ends, `reads` its events; `hold` keeps each question waiting until
   * released; `announce` is a notification of a commit; `failReads` makes reading the events fail.
   */
  function watched() {
    const { store } = opened;
    const looks: number[] = [];
    const reads: number[] = [];
    let hold: Promise<void> | undefined;
    let readsFail = false;
    const log = {
      async readLog(query: Pick<LogQuery, 'after' | 'limit'>): Promise<StoredEvent[]> {
        reads.push(query.after);
        await hold;
        if (readsFail) throw new Error('the events cannot be read');
        return store.eventLog.readLog(query);
      },
      async head(): Promise<number> {
        looks.push(looks.length);
        await hold;
        return readLogHead(store.db);
      },
    };
    const changes = postgresCommits(store.db, { log, pollMs: 3_600_000 });
    opens.push(changes);
    const commits: Commit[] = [];
    const heard: (readonly RowChange[] | undefined)[] = [];
    changes.onCommitted((commit) => {
      commits.push(commit);
      heard.push(commit.changes);
    });
    return { changes, heard, commits, looks, reads, announce: (position: number) => changes.notified(position), failReads: () => (readsFail = true), holdLooks: () => {
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      return () => {
        hold = undefined;
        release();
      };
    } };
  }

  it('tells, before a look resolves, every commit made before it was asked for, with the pets and statuses it changed', async () => {
    await addPet(opened.store, { name: 'before the first look', categoryId: 1, status: 'available' });
    const { changes, heard, commits } = watched();
    await changes.refresh();
    assert.deepEqual(commits, [{ last: await readLogHead(opened.store.db) }], 'the first look finds where the log ends');
    const pet = await addPet(opened.store, { name: 'unnotified', categoryId: 1, status: 'available' });
    await changes.refresh();
    assert.deepEqual(commits.at(-1), { last: await readLogHead(opened.store.db), changes: [{ table: 'pets', id: pet.id, statuses: ['available'] }], types: ['PetAdded'] });
    await changePetStatus(opened.store, { id: pet.id, status: 'pending' });
    await changePetStatus(opened.store, { id: pet.id, status: 'sold' });
    await changes.refresh();
    assert.deepEqual(heard.at(-1), [{ table: 'pets', id: pet.id, statuses: ['available', 'pending'] }, { table: 'pets', id: pet.id, statuses: ['pending', 'sold'] }]);
    const told = heard.length;
    await changes.refresh();
    assert.equal(heard.length, told, 'nothing new: nothing told');
  });

  it('asks only where the log ends when nothing is new, and reads the events only when it ends further', async () => {
    const { changes, heard, looks, reads } = watched();
    await changes.refresh();
    const [looked, read] = [looks.length, reads.length];
    await changes.refresh();
    await changes.refresh();
    assert.deepEqual([looks.length - looked, reads.length - read], [2, 0], 'two looks, no read of the events');
    const pet = await addPet(opened.store, { name: 'found by the head', categoryId: 1, status: 'sold' });
    await changes.refresh();
    assert.deepEqual([looks.length - looked, reads.length - read], [3, 1], 'the head moved on: the events are read');
    assert.deepEqual(heard.at(-1), [{ table: 'pets', id: pet.id, statuses: ['sold'] }]);
  });

  it('reads the events at once, without asking where the log ends, when a notification announced a commit', async () => {
    const { changes, heard, looks, reads, announce } = watched();
    await changes.refresh();
    const [looked, read] = [looks.length, reads.length];
    const pet = await addPet(opened.store, { name: 'announced', categoryId: 1, status: 'pending' });
    announce((await readLogHead(opened.store.db)));
    await changes.refresh();
    assert.deepEqual([looks.length - looked, reads.length - read], [0, 1]);
    assert.deepEqual(heard.at(-1), [{ table: 'pets', id: pet.id, statuses: ['pending'] }]);
  });

  it("tells this instance's own group at once when it follows what was told, and leaves one past a gap to a look", async () => {
    const { changes, heard, commits, looks, reads, announce } = watched();
    await changes.refresh();
    const head = await readLogHead(opened.store.db);
    const [looked, read, told] = [looks.length, reads.length, heard.length];
    changes.committed({ drawnFrom: head + 1, last: head + 2, changes: [{ table: 'pets', id: 7, statuses: ['sold'] }], types: ['PetStatusChanged'] });
    assert.deepEqual(commits.slice(told), [{ last: head + 2, changes: [{ table: 'pets', id: 7, statuses: ['sold'] }], types: ['PetStatusChanged'] }]);
    // Its own notification, when it comes, finds it told already.
    announce(head + 2);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual([looks.length - looked, reads.length - read], [0, 0], 'no look');
    // Positions past a gap: another instance's commit may lie between, so only a look may tell it.
    changes.committed({ drawnFrom: head + 10, last: head + 11, changes: [{ table: 'pets', id: 8, statuses: ['available'] }], types: ['PetAdded'] });
    assert.equal(heard.length, told + 1, 'not told');
    await changes.refresh();
    assert.equal(reads.length - read, 1, 'a look reads the log after what was told');
  });


  it("reads nothing for this instance's own group notified before its commit is told, and still reads another instance's", async () => {
    const { changes, commits, reads, announce } = watched();
    await changes.refresh();
    const read = reads.length;
    // Another instance's commit, notified while this instance's group is committing, is read.
    const pet = await addPet(opened.store, { name: 'another instance', categoryId: 1, status: 'sold' });
    const head = await readLogHead(opened.store.db);
    changes.committing({ drawnFrom: head + 1, last: head + 2 });
    announce(head);
    await changes.refresh();
    assert.equal(reads.length - read, 1, "another instance's commit: a read of the log");
    assert.deepEqual(commits.at(-1), { last: head, changes: [{ table: 'pets', id: pet.id, statuses: ['sold'] }], types: ['PetAdded'] });
    // This instance's group: its notification outruns the answer to its COMMIT.
    announce(head + 2);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(reads.length - read, 1, 'its own group: no read of the log');
    changes.committing(undefined);
    changes.committed({ drawnFrom: head + 1, last: head + 2, changes: [{ table: 'pets', id: 9, statuses: ['pending'] }], types: ['PetStatusChanged'] });
    assert.deepEqual(commits.at(-1), { last: head + 2, changes: [{ table: 'pets', id: 9, statuses: ['pending'] }], types: ['PetStatusChanged'] });
  });

  it('answers every caller of one turn with one look, and a caller during a look with the next one', async () => {
    const { changes, looks, reads, holdLooks } = watched();
    await changes.refresh();
    const before = looks.length;
    const release = holdLooks();
    const first = [changes.refresh(), changes.refresh(), changes.refresh()];
    // Callers kept asking in that turn: the look waits one more (see the next test).
    await turn();
    await turn();
    assert.equal(looks.length, before + 1, 'one look for the three callers');
    // Committed while that look is in flight: the caller after it must not be answered by it.
    const late = await addPet(opened.store, { name: 'during the look', categoryId: 1, status: 'pending' });
    let heardLate = false;
    changes.onCommitted(({ changes: changed }) => {
      if (changed?.some((change) => change.id === late.id)) heardLate = true;
    });
    const second = [changes.refresh(), changes.refresh()];
    release();
    await Promise.all([...first, ...second]);
    assert.equal(looks.length, before + 2, 'one more look for the callers that came during the first');
    assert.equal(reads.length, 1, 'the first look, asked after the commit, read it; the second found nothing new');
    assert.ok(heardLate, 'the later callers were answered after the commit was told');
  });

  it("looks in the next turn for a lone caller, and a turn later, shared with that turn's callers, while callers keep asking", async () => {
    const { changes, looks } = watched();
    await changes.refresh();
    const alone = changes.refresh();
    await turn();
    assert.equal(looks.length, 2, 'a lone caller is looked for in the next turn');
    await alone;
    const callers = [changes.refresh(), changes.refresh()];
    await turn();
    assert.equal(looks.length, 2, 'callers kept asking in the turn: the look waits one more');
    callers.push(changes.refresh());
    await Promise.all(callers);
    assert.equal(looks.length, 3, "the next turn's caller shared the look");
  });

  it('tells a notified commit whose events cannot be read as "anything may have changed" at its position', async () => {
    const { changes, commits, announce, failReads } = watched();
    await changes.refresh();
    const head = await readLogHead(opened.store.db);
    const told = commits.length;
    failReads();
    announce(head + 3);
    await assert.rejects(changes.refresh());
    assert.deepEqual(commits.slice(told), [{ last: head + 3 }], 'followers learn that the log grew');
    announce(head + 2);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(commits.length, told + 1, 'a position told already is not told again');
  });

  it('answers a caller within LOOK_BOUND_MS while a look hangs, at once once it has hung past it, and reports itself stalled until a look answers', async () => {
    const { changes, holdLooks } = watched();
    await changes.refresh();
    const release = holdLooks();
    const asked = performance.now();
    await assert.rejects(changes.refresh(), StoreUnavailable);
    assert.ok(performance.now() - asked >= LOOK_BOUND_MS - 5, 'a caller waits for the look up to the bound');
    assert.match(changes.stalled()?.message ?? '', /^the look for other instances' commits has not been answered for \d+ ms$/);
    const again = performance.now();
    await assert.rejects(changes.refresh(), StoreUnavailable);
    assert.ok(performance.now() - again < LOOK_BOUND_MS / 2, 'a caller after the bound is refused at once');
    release();
    // The hung look ends once released, a few turns later: callers wait for looks again.
    for (let turns = 0; changes.stalled() !== undefined && turns < 1000; turns++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(changes.stalled(), undefined);
    await changes.refresh();
  });

  it('is stalled once its first caller was refused at the bound, though its look began turns after that caller asked', async () => {
    const { changes, holdLooks } = watched();
    await changes.refresh();
    const release = holdLooks();
    // Two callers in one turn keep the look waiting a turn more (LOOK_FILL_TURNS), and that turn runs long.
    const refused = [changes.refresh(), changes.refresh()].map((caller) => assert.rejects(caller, StoreUnavailable));
    await turn();
    const until = performance.now() + 50;
    while (performance.now() < until);
    await Promise.all(refused);
    assert.match(changes.stalled()?.message ?? '', /^the look for other instances' commits has not been answered for \d+ ms$/);
    release();
  });
});
