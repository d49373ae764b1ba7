import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { addPet, changePetStatus, StoreUnavailable, StreamVersionConflict } from '../../application/index.ts';
import type { IdempotencyRecord, RowChange } from '../../application/index.ts';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { openSqlite } from '../../adapters/store/sqlite/open-sqlite.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import type { SqliteDatabase } from 'kysely';
import { openCommitMark } from '../../adapters/store/sqlite/sqlite-commits.ts';
import { createBatchWriter, NewStreamTaken } from '../../adapters/store/sqlite/sqlite-batch-writer.ts';
import type { AppendRequest } from '../../adapters/store/write/append-plan.ts';
import type { AppendResult, NewAppend } from '../../application/index.ts';
import type { PendingWrite } from '../../adapters/store/write/batch-rows.ts';
import { NODE_TS_ARGS } from '../support/processes.ts';
import { SQLITE_STREAM_VERSIONS } from '../../adapters/store/sql-event-log.ts';
import { createSqlWebhookSubscriptions } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';
import { appendPet } from '../support/append-as-use-case.ts';

const metadata = { recordedAt: '2026-11-21T12:00:00.000Z' };
const otherProcess = fileURLToPath(new URL('../http/fixtures/write-from-another-process.ts', import.meta.url));

/** The WAL-index header's change counter (bytes 8-11 of the -shm file, native order): one more for each commit. */
function commitsSoFar(file: string): number {
  const header = readFileSync(`${file}-shm`).subarray(0, 12);
  return endianness() === 'LE' ? header.readUInt32LE(8) : header.readUInt32BE(8);
}

describe('SQLite group commit', () => {
  let directory: string;
  let file: string;
  let store: SqlitePetStore;
  const reports: (readonly RowChange[] | undefined)[] = [];

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-group-'));
    file = join(directory, 'store.db');
    store = await openSqlitePetStore(file);
    store.commits.onCommitted(({ changes }) => reports.push(changes));
  });
  after(async () => {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('commits the creations asked for in one turn together, and reports them together', async () => {
    reports.length = 0;
    const pets = await Promise.all(Array.from({ length: 12 }, (_, index) => addPet(store, { name: `batch ${index}`, categoryId: 1, status: 'available' })));
    assert.equal(new Set(pets.map((pet) => pet.id)).size, 12);
    assert.equal(reports.length, 1, 'one commit for the whole group');
    assert.deepEqual(reports[0]!.map((change) => change.id).sort((a, b) => a - b), pets.map((pet) => pet.id).sort((a, b) => a - b));
  });

  it('takes the ids of a group\'s creations in the transaction of their appends: one commit in all', async () => {
    await addPet(store, { name: 'warm up', categoryId: 1 });
    const before = commitsSoFar(file);
    const pets = await Promise.all(Array.from({ length: 8 }, (_, index) => addPet(store, { name: `one commit ${index}`, categoryId: 1 })));
    assert.equal(commitsSoFar(file) - before, 1);
    const ids = pets.map((pet) => pet.id).sort((a, b) => a - b);
    assert.deepEqual(ids, Array.from({ length: 8 }, (_, index) => ids[0]! + index), 'consecutive ids');
  });

  it('lets creations asked in the turn after a group was asked for join it, before it takes the lock: one commit', async () => {
    await addPet(store, { name: 'warm up', categoryId: 1 });
    const before = commitsSoFar(file);
    const first = Array.from({ length: 4 }, (_, index) => addPet(store, { name: `first ${index}`, categoryId: 1 }));
    const late = await new Promise<Promise<{ id: number }>[]>((resolve) => setImmediate(() => {
      resolve(Array.from({ length: 4 }, (_, index) => addPet(store, { name: `late ${index}`, categoryId: 1 })));
    }));
    const pets = await Promise.all([...first, ...late]);
    assert.equal(commitsSoFar(file) - before, 1, 'one commit for both');
    assert.equal(new Set(pets.map((pet) => pet.id)).size, 8);
  });

  it('lets the creations asked over several turns while a group commits join the next group together: one commit for them', async () => {
    await withHeldGroups('commit', async (held, holding) => {
      const committed: number[][] = [];
      held.commits.onCommitted(({ changes }) => committed.push((changes ?? []).map((change) => change.id).sort((a, b) => a - b)));
      const first = Array.from({ length: 4 }, (_, index) => addPet(held, { name: `first ${index}`, categoryId: 1 }));
      await holding.reached;
      const late: Promise<{ id: number }>[] = [];
      for (let turn = 0; turn < 3; turn += 1) {
        late.push(addPet(held, { name: `late ${turn} a`, categoryId: 1 }), addPet(held, { name: `late ${turn} b`, categoryId: 1 }));
        await new Promise((resolve) => setImmediate(resolve));
      }
      holding.open();
      const ids = async (pets: Promise<{ id: number }>[]) => (await Promise.all(pets)).map((pet) => pet.id).sort((a, b) => a - b);
      const [firstIds, lateIds] = [await ids(first), await ids(late)];
      assert.deepEqual(committed, [firstIds, lateIds], 'the held group, then one commit for every creation asked meanwhile');
      assert.deepEqual([...firstIds, ...lateIds], Array.from({ length: 10 }, (_, index) => 1 + index), 'dense, increasing ids in the order of the groups');
    });
  });

  it('holds the write lock for no turn of the event loop: a group draws its ids, builds and commits its creations at once', async () => {
    const other = await openSqliteConnection(file);
    other.exec('PRAGMA busy_timeout = 0');
    let lockedAtATurn = 0;
    let turns = 0;
    try {
      const creating = Promise.all(Array.from({ length: 40 }, (_, index) => addPet(store, { name: `unlocked ${index}`, categoryId: 1 })));
      let done = false;
      void creating.finally(() => (done = true));
      // Every turn while the creations are under way, another connection asks for the write lock at once.
      while (!done) {
        await new Promise((resolve) => setImmediate(resolve));
        turns += 1;
        try {
          other.exec('BEGIN IMMEDIATE');
          other.exec('ROLLBACK');
        } catch (error) {
          if (!/locked|busy/i.test(String(error))) throw error;
          lockedAtATurn += 1;
        }
      }
      assert.equal((await creating).length, 40);
    } finally {
      other.close();
    }
    assert.ok(turns > 0);
    assert.equal(lockedAtATurn, 0, `the lock was held at ${lockedAtATurn} of ${turns} turns`);
  });

  it('commits a steady stream of creations in several groups: joining a group is bounded', async () => {
    await addPet(store, { name: 'warm up', categoryId: 1 });
    const before = commitsSoFar(file);
    const asked: Promise<{ id: number }>[] = [];
    for (let turn = 0; turn < 10; turn += 1) {
      asked.push(addPet(store, { name: `stream ${turn}`, categoryId: 1 }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(new Set((await Promise.all(asked)).map((pet) => pet.id)).size, 10);
    assert.ok(commitsSoFar(file) - before > 1, 'more than one group');
  });

  it('keeps the id of a creation that failed taken, so a stream already under the next id fails one creation only', async () => {
    const next = (await store.db.selectFrom('sequences').select('value').where('name', '=', 'pet_id').executeTakeFirstOrThrow()).value + 1;
    await appendPet(store.eventStore, `pet-${next}`, 'no_stream', [{ type: 'PetAdded', data: { id: next, name: 'around', categoryId: 1, status: null } }], metadata, { petAfter: { id: next, name: 'around', categoryId: 1 } });
    const [blocked, after] = await Promise.allSettled([addPet(store, { name: 'blocked', categoryId: 1 }), addPet(store, { name: 'after', categoryId: 1 })]);
    assert.equal(blocked.status, 'rejected');
    assert.ok((blocked as PromiseRejectedResult).reason instanceof StreamVersionConflict);
    assert.equal(after.status, 'fulfilled');
    assert.equal((after as PromiseFulfilledResult<{ id: number }>).value.id, next + 1);
    assert.equal((await addPet(store, { name: 'later', categoryId: 1 })).id, next + 2);
  });

  it('fails only the append that conflicts; the rest of its group commits', async () => {
    const event = (name: string) => [{ type: 'PetAdded' as const, data: { id: 900_001, name, categoryId: 1, status: null } }];
    const petAfter = (name: string) => ({ petAfter: { id: 900_001, name, categoryId: 1 } });
    const [first, second, bystander] = await Promise.allSettled([
      appendPet(store.eventStore, 'pet-900001', 'no_stream', event('first'), metadata, petAfter('first')),
      appendPet(store.eventStore, 'pet-900001', 'no_stream', event('second'), metadata, petAfter('second')),
      addPet(store, { name: 'bystander', categoryId: 2 }),
    ]);
    assert.equal(first.status, 'fulfilled');
    assert.equal(second.status, 'rejected');
    assert.ok((second as PromiseRejectedResult).reason instanceof StreamVersionConflict);
    assert.equal(bystander.status, 'fulfilled');
    const stream = await store.eventStore.readStream('pet-900001');
    assert.deepEqual(stream.events.map((stored) => stored.event.data), [{ id: 900_001, name: 'first', categoryId: 1, status: null }]);
    assert.equal((await store.catalog.get(900_001))!.pet.name, 'first');
  });

  it('has committed an append when it resolves: another connection reads it at once', async () => {
    const pet = await addPet(store, { name: 'durable', categoryId: 3 });
    const other = await openSqlite(file, { migrate: false });
    try {
      const row = await other.db.selectFrom('pets').select('name').where('id', '=', pet.id).executeTakeFirst();
      assert.deepEqual(row, { name: 'durable' });
    } finally {
      await other.db.destroy();
    }
  });

  it('reports a status change with the status it left and the one it entered', async () => {
    const pet = await addPet(store, { name: 'moving', categoryId: 1, status: 'available' });
    reports.length = 0;
    await changePetStatus(store, { id: pet.id, status: 'sold' });
    assert.deepEqual(reports, [[{ table: 'pets', id: pet.id, statuses: ['available', 'sold'] }]]);
  });

  it('reports "anything may have changed" for a write that went around the store', async () => {
    await store.commits.refresh();
    reports.length = 0;
    await sql`update pets set name = 'renamed' where id = 1`.execute(store.db);
    await store.commits.refresh();
    assert.deepEqual(reports, [undefined]);
    await store.commits.refresh();
    assert.deepEqual(reports, [undefined], 'once');
  });

  it('shares one look at the file among the refreshes asked in a turn, made after the last of them: a commit later in the turn is seen', async () => {
    const other = await openSqliteConnection(file);
    try {
      await store.commits.refresh();
      reports.length = 0;
      const first = store.commits.refresh();
      const second = store.commits.refresh();
      assert.equal(first, second, 'one look for the turn');
      // Another connection commits after both asked, in the same turn: the look they wait for sees it.
      other.prepare("update pets set name = 'renamed in the turn' where id = 1").run([]);
      await first;
      assert.deepEqual(reports, [undefined]);
      assert.notEqual(store.commits.refresh(), first, 'a later turn looks again');
    } finally {
      other.close();
    }
  });

  it('reports "anything may have changed" once another process has committed to the file, by itself while listened to', async () => {
    await store.commits.refresh();
    reports.length = 0;
    const told = new Promise<void>((resolve) => {
      const stop = store.commits.onCommitted(() => {
        stop();
        resolve();
      });
    });
    await promisify(execFile)(process.execPath, [...NODE_TS_ARGS, otherProcess, file, 'add', 'elsewhere', 'pending']);
    // Nobody calls refresh: the look every few milliseconds while anyone listens finds the commit. Its timer
    // does not keep a process alive (nor should it), so the wait is bounded by one that does.
    let deadline: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([told, new Promise<never>((_, reject) => (deadline = setTimeout(() => reject(new Error('the commit was not told within 5 s')), 5_000)))])
      .finally(() => clearTimeout(deadline));
    await store.commits.refresh();
    const count = reports.length;
    assert.ok(count > 0 && reports.every((changes) => changes === undefined), 'only "anything may have changed"');
    await store.commits.refresh();
    assert.equal(reports.length, count, 'nothing new since: nothing told');
  });
});

describe('SQLite catalogue watch without a -shm file (an in-memory database)', () => {
  it('reports its own commits precisely and a write around the store as "anything may have changed"', async () => {
    const store = await openSqlitePetStore(':memory:');
    const reports: (readonly RowChange[] | undefined)[] = [];
    store.commits.onCommitted(({ changes }) => reports.push(changes));
    try {
      const pet = await addPet(store, { name: 'in memory', categoryId: 1, status: 'pending' });
      assert.deepEqual(reports, [[{ table: 'pets', id: pet.id, statuses: ['pending'] }]]);
      await store.commits.refresh();
      assert.equal(reports.length, 1, 'nothing else changed');
      await sql`update pets set name = 'renamed'`.execute(store.db);
      await store.commits.refresh();
      assert.deepEqual(reports.at(-1), undefined);
      assert.equal(reports.length, 2);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite commits on the writer\'s connection', () => {
  it('write nothing on the store\'s own connection: opened to read only, it serves the writes of the store all the same', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'petstore-reads-only-'));
    const store = await openSqlitePetStore(join(directory, 'store.db'), { readsOnly: true });
    try {
      const pet = await addPet(store, { name: 'written elsewhere', categoryId: 1 });
      await changePetStatus(store, { id: pet.id, status: 'sold' });
      const subscriptions = createSqlWebhookSubscriptions(store);
      const { subscription } = await subscriptions.create({ ownerKeyId: '1', url: 'https://93.184.215.14/h' }, new Date(), 100);
      assert.deepEqual((await subscriptions.lease('a', new Date(), new Date(Date.now() + 10_000))).map((held) => held.id), [subscription.id]);
      assert.equal(await store.checkWrites!(), undefined);
      assert.equal((await store.catalog.get(pet.id))!.pet.status, 'sold');
      await assert.rejects(sql`update pets set name = 'around'`.execute(store.db), /readonly|read-only/i, 'the connection itself refuses writes');
    } finally {
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });


  it('answer a write only once its group has committed, while reads see nothing of it and timers run', async () => {
    await withHeldGroups('commit', async (store, held) => {
      let settled = false;
      const writing = addPet(store, { name: 'held', categoryId: 1 }).finally(() => (settled = true));
      await held.reached;
      assert.deepEqual(await store.catalog.list({ limit: 10 }), [], 'a read answers, and sees nothing not yet committed');
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(settled, false, 'the write waits for its commit');
      held.open();
      const pet = await writing;
      assert.deepEqual((await store.catalog.list({ limit: 10 })).map((listed) => listed.id), [pet.id]);
    });
  });

  it('answer 503-worthy when a group fails at its commit, and the next write commits with nothing of the lost group kept', async () => {
    await withHeldGroups('commit', async (store, held) => {
      const lost = addPet(store, { name: 'never committed', categoryId: 1 });
      await held.reached;
      held.fail(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }));
      const failure = await lost.then(() => undefined, (error: unknown) => error);
      assert.ok(failure instanceof StoreUnavailable, `a store fault, not ${String(failure)}`);
      assert.match(failure.message, /disk failed/);
      const pet = await addPet(store, { name: 'after the failed group', categoryId: 1 });
      assert.deepEqual((await store.catalog.list({ limit: 10 })).map((listed) => listed.name), [pet.name]);
    });
  });

  it('are reported pet by pet, also to a look at the file between the commit and its answer', async () => {
    await withHeldGroups('answer', async (store, held) => {
      const reports: (readonly RowChange[] | undefined)[] = [];
      store.commits.onCommitted(({ changes }) => reports.push(changes));
      const writing = addPet(store, { name: 'committed, not yet answered', categoryId: 1, status: 'pending' });
      await held.reached;
      const pet = (await store.catalog.list({ limit: 10 }))[0]!;
      assert.deepEqual(reports, [[{ table: 'pets', id: pet.id, statuses: ['pending'] }]], 'reported as committed, before the write is answered');
      await store.commits.refresh();
      assert.equal(reports.length, 1, 'the commit on the file is known for the store\'s own: no "anything may have changed"');
      held.open();
      assert.equal((await writing).id, pet.id);
    });
  });
});

/** A store on a fresh file whose first group waits at `at` (before its COMMIT, or before its answer) until `held` opens; removed afterwards. */
async function withHeldGroups(at: 'commit' | 'answer', work: (store: SqlitePetStore, held: GroupGate) => Promise<void>): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-writer-'));
  const held = groupGate();
  const store = await openSqlitePetStore(join(directory, 'store.db'), { holdGroups: { [at === 'commit' ? 'beforeCommit' : 'beforeAnswer']: held.wait } });
  try {
    await work(store, held);
  } finally {
    held.open();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

type GroupGate = ReturnType<typeof groupGate>;

/** A gate the store's first group waits at: `reached` once it waits, `open` lets it go on, `fail` makes the wait throw. */
function groupGate() {
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let release!: (error?: Error) => void;
  const released = new Promise<void>((resolve, reject) => (release = (error) => (error ? reject(error) : resolve())));
  let first = true;
  return {
    reached,
    wait(): Promise<void> {
      if (!first) return Promise.resolve();
      first = false;
      arrived();
      return released;
    },
    open: () => release(),
    fail: (error: Error) => release(error),
  };
}

describe('SQLite batch writer (sqlite-batch-writer.ts): a group\'s transaction on the writer\'s connection', () => {
  const now = '2026-11-25T12:00:00.000Z';
  const created = (id: number, name: string): AppendRequest => ({
    streams: [{
      streamId: `pet-${id}`, expected: 'no_stream' as const, stateAfter: { kind: 'present', pet: { id, name, categoryId: 1, status: 'available' } },
      events: [{ type: 'PetAdded' as const, data: { id, name, categoryId: 1, status: 'available' as const } }],
    }],
    metadata: { recordedAt: now },
  });

  /** A writer on a fresh file whose statements are counted (each use of one goes through `prepare`). */
  async function countedWriter() {
    const directory = mkdtempSync(join(tmpdir(), 'petstore-batch-writer-'));
    const file = join(directory, 'store.db');
    const { db, database } = await openSqlite(file);
    const statements: string[] = [];
    const counted: SqliteDatabase = { prepare: (text) => (statements.push(text), database.prepare(text)), close: () => {} };
    let changes: readonly RowChange[] = [];
    const writer = createBatchWriter({
      connect: async () => ({ database: counted, mark: openCommitMark(database, file), close() {} }),
      committed: (_, commit) => (changes = commit.changes),
    });
    /**
     * Commits a group as the store does: a request whose first stream is named fresh goes as a creation
     * (built under the lock, its stream not read), or refused by its decision when `build` says so. A
     * group that finds a new stream taken runs again, reading it (`ranAgain`). `answered`: the outcomes
     * known when COMMIT returned, before the answers were given.
     */
    const group = async (requests: AppendRequest[], freshStreams?: ReadonlySet<string>, build?: (request: AppendRequest) => NewAppend) => {
      statements.length = 0;
      const outcomes: ({ result: AppendResult } | { error: unknown })[] = [];
      const writes = requests.map((request, index): PendingWrite => {
        const answer = { observed: undefined, resolve: (result: AppendResult) => void (outcomes[index] = { result }), reject: (error: unknown) => void (outcomes[index] = { error }) };
        return freshStreams?.has(request.streams[0]!.streamId) ? { ...answer, sequence: 'pet', build: () => build?.(request) ?? request as NewAppend, reads: [] } : { ...answer, request };
      });
      const commit = async (readNewStreams: boolean) => {
        await writer.begin();
        return writer.commit({ writes, drawn: new Map([['pet', { first: 0, count: 0 }]]), writeHealthRow: false, now, readNewStreams });
      };
      let ranAgain = false;
      const { answers } = await commit(false).catch((error: unknown) => {
        if (!(error instanceof NewStreamTaken)) throw error;
        ranAgain = true;
        return commit(true);
      });
      const answered = outcomes.filter(Boolean).length;
      for (const answer of answers) answer();
      return { reply: { outcomes, changes }, statements: [...statements], ranAgain, answered };
    };
    return { db, group, async close() { await db.destroy(); rmSync(directory, { recursive: true, force: true }); } };
  }

  it('reads and writes a group with the same few statements however many appends it holds', async () => {
    const writer = await countedWriter();
    try {
      const one = await writer.group([created(1, 'alone')]);
      const many = await writer.group(Array.from({ length: 40 }, (_, index) => created(100 + index, `many ${index}`)));
      // Each statement is prepared once a group and run once a row.
      assert.deepEqual(many.statements, one.statements, `${one.statements.length} statements for one append, ${many.statements.length} for 40`);
      assert.deepEqual(many.reply.outcomes.map((outcome) => 'result' in outcome && outcome.result.version), Array(40).fill(1));
      const positions = many.reply.outcomes.map((outcome) => ('result' in outcome ? outcome.result.position : 0));
      assert.deepEqual(positions, Array.from({ length: 40 }, (_, index) => 2 + index), 'positions follow the log in the order asked');
      assert.equal((await writer.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n, 41);
      assert.equal((await writer.db.selectFrom('pets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n, 41);
    } finally {
      await writer.close();
    }
  });

  it('writes the new streams of a group\'s creations without reading them or a savepoint; one taken already rolls the group back to run again, refused alone', async () => {
    const writer = await countedWriter();
    try {
      await writer.group([created(3, 'around')]);
      const reads = (statements: readonly string[]) => statements.filter((text) => /^select .* from (events|pets) /.test(text));
      const fresh = await writer.group([created(1, 'one'), created(2, 'two')], new Set(['pet-1', 'pet-2']));
      assert.deepEqual(reads(fresh.statements), [], 'neither the streams\' versions nor the pets\' rows are read');
      // A savepoint would copy every page the group changes before changing it.
      assert.deepEqual(fresh.statements.filter((text) => /savepoint/i.test(text)), []);
      assert.deepEqual(fresh.reply.outcomes.map((outcome) => 'result' in outcome && outcome.result.version), [1, 1]);
      assert.equal(fresh.ranAgain, false);
      const taken = await writer.group([created(4, 'before'), created(3, 'taken'), created(5, 'after')], new Set(['pet-3', 'pet-4', 'pet-5']));
      assert.equal(taken.ranAgain, true);
      assert.deepEqual(taken.reply.outcomes.map((outcome) => ('result' in outcome ? outcome.result.version : (outcome.error as Error).name)), [1, 'StreamVersionConflict', 1]);
      assert.deepEqual(await writer.db.selectFrom('pets').select(['id', 'name']).orderBy('id').execute(), [
        { id: 1, name: 'one' }, { id: 2, name: 'two' }, { id: 3, name: 'around' }, { id: 4, name: 'before' }, { id: 5, name: 'after' },
      ]);
    } finally {
      await writer.close();
    }
  });

  it('answers a creation its decision refused once the group has committed, as any other: a group run again decides afresh', async () => {
    const writer = await countedWriter();
    try {
      const refusal = new Error('the decision refused it');
      const group = await writer.group([created(1, 'refused'), created(2, 'kept')], new Set(['pet-1', 'pet-2']), (request) => {
        if (request.streams[0]!.streamId === 'pet-1') throw refusal;
        return request as NewAppend;
      });
      assert.equal(group.answered, 0, 'nobody was answered before COMMIT returned');
      assert.deepEqual(group.reply.outcomes.map((outcome) => ('result' in outcome ? outcome.result.version : outcome.error)), [refusal, 1]);
    } finally {
      await writer.close();
    }
  });

  it('takes a stream\'s version from its read-model row, read anyway, without looking up its events', async () => {
    const writer = await countedWriter();
    try {
      const sold = (expected: number): AppendRequest => ({
        streams: [{
          streamId: 'pet-9', expected, stateAfter: { kind: 'present', pet: { id: 9, name: 'Rex', categoryId: 1, status: 'sold' } },
          events: [{ type: 'PetStatusChanged' as const, data: { id: 9, from: 'available' as const, to: 'sold' as const } }],
        }],
        metadata: { recordedAt: now },
      });
      await writer.group([created(9, 'Rex')]);
      const moved = await writer.group([sold(1)]);
      assert.deepEqual(moved.statements.filter((text) => text === SQLITE_STREAM_VERSIONS), [], 'no stream\'s version is looked up in the log');
      assert.ok(moved.statements.some((text) => /^select .* from pets /.test(text)), 'the pet\'s row is read');
      assert.deepEqual(moved.reply.outcomes.map((outcome) => 'result' in outcome && outcome.result.version), [2]);
      const stale = await writer.group([sold(1)]);
      assert.deepEqual(stale.reply.outcomes.map((outcome) => 'error' in outcome && outcome.error), [new StreamVersionConflict('pet-9', 1, 2)]);
    } finally {
      await writer.close();
    }
  });

  it('runs a later append against what an earlier one of its group wrote, and replaces an expired idempotency record', async () => {
    const writer = await countedWriter();
    try {
      const record = (fingerprint: string, expiresAt: string) => ({ scope: 'key-1', key: 'k', fingerprint, answer: { id: 7, name: 'Rex', categoryId: 1 }, expiresAt });
      const remembering = (request: AppendRequest, remember: IdempotencyRecord): AppendRequest => ({ ...request, options: { ...request.options, remember } });
      await writer.group([remembering(created(6, 'earlier'), record('old', '2026-11-25T11:00:00.000Z'))]);
      const { reply } = await writer.group([
        remembering(created(7, 'Rex'), record('new', '2026-11-26T12:00:00.000Z')),
        {
          streams: [{
            streamId: 'pet-7', expected: 1, stateAfter: { kind: 'present', pet: { id: 7, name: 'Rex', categoryId: 1, status: 'sold' } },
            events: [{ type: 'PetStatusChanged' as const, data: { id: 7, from: 'available' as const, to: 'sold' as const } }],
          }],
          metadata: { recordedAt: now },
        },
        remembering(created(8, 'same key'), record('other', '2026-11-26T12:00:00.000Z')),
      ]);
      assert.deepEqual(reply.outcomes.map((outcome) => ('result' in outcome ? outcome.result.version : (outcome.error as Error).name)), [1, 2, 'IdempotencyKeyTaken']);
      assert.deepEqual(reply.changes, [{ table: 'pets', id: 7, statuses: ['available'] }, { table: 'pets', id: 7, statuses: ['available', 'sold'] }]);
      assert.deepEqual(await writer.db.selectFrom('pets').select(['id', 'status', 'version']).where('id', 'in', [7, 8]).execute(), [{ id: 7, status: 'sold', version: 2 }]);
      assert.deepEqual(await writer.db.selectFrom('idempotency_keys').select(['fingerprint', 'expires_at']).execute(), [{ fingerprint: 'new', expires_at: '2026-11-26T12:00:00.000Z' }]);
    } finally {
      await writer.close();
    }
  });
});
