import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { addPet, changePetStatus } from '../../../application/index.ts';
import type { StoredEvent } from '../../../application/index.ts';
import { rebuildReadModels, verifyReadModels } from '../../../adapters/store/read-models/read-model-maintenance.ts';
import { openPostgresPetStore } from '../../../adapters/store/postgres/postgres-pet-store.ts';
import type { SqlPetStore } from '../../../adapters/store/sql-pet-store.ts';
import { openTemporaryStore } from '../../support/temporary-store.ts';
import type { TemporaryPostgresStore } from '../../support/temporary-store.ts';

/** Polls `condition` until it holds; fails after `timeoutMs`. For states only the server can report. */
async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
        throw new Error(`timed out waiting until ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A reader that follows the log the way a subscriber would: by position, never looking back. */
function follower(store: TemporaryPostgresStore['store']) {
  const seen: StoredEvent[] = [];
  let cursor = 0;
  return {
    seen,
    async poll(): Promise<number> {
      let read = 0;
      for (;;) {
        const page = await store.eventLog.readLog({ after: cursor, limit: 100 });
        if (page.length === 0) return read;
        seen.push(...page);
        cursor = page.at(-1)!.position;
        read += page.length;
      }
    },
  };
}

const key = (stored: StoredEvent) => `${stored.streamId}@${stored.streamVersion}`;

describe('reading the log in position order while writers commit', () => {
  let opened: TemporaryPostgresStore;
  /** Holds an uncommitted write in a transaction of its own. */
  let blocker: pg.Client;
  /** Watches the server's activity from outside any transaction (inside one, pg_stat_activity stays frozen). */
  let observer: pg.Client;
  /** Another instance on the same database. */
  let other: SqlPetStore;

  before(async () => {
    opened = await openTemporaryStore('postgres', { poolSize: 6 });
    other = await openPostgresPetStore({ url: opened.url!, poolSize: 2, statementTimeoutMs: 10_000 }, { migrate: false });
    blocker = new pg.Client({ connectionString: opened.url });
    await blocker.connect();
    observer = new pg.Client({ connectionString: opened.url });
    await observer.connect();
  });
  after(async () => {
    await other.close();
    await blocker.end();
    await observer.end();
    await opened.close();
  });

  const waiting = async () => {
    const { rows } = await observer.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    return rows[0]!.n;
  };

  it('skips no event of an append held up after taking its position, nor does a rebuild', async () => {
    const held = await addPet(opened.store, { name: 'held up', categoryId: 1, status: 'available' });
    const quick = await addPet(opened.store, { name: 'quick', categoryId: 1, status: 'available' });
    const reader = follower(opened.store);
    await reader.poll();

    // Another transaction has an uncommitted event at the version the held append will write: the
    // append draws its position, then waits at the unique index, in flight, until that one rolls back.
    await blocker.query('begin');
    await blocker.query(
      "insert into events (stream_id, stream_version, type, data, metadata, recorded_at) values ($1, 2, 'PetStatusChanged', '{}', '{}', '')",
      [`pet-${held.id}`],
    );
    const slow = changePetStatus(opened.store, { id: held.id, status: 'pending' });
    await until(async () => (await waiting()) === 1, 'the held append waits at the unique index');

    // A later append, by another instance (this one's next group waits for the held one's): were
    // positions free to commit out of order, it would commit now, after the held one's position;
    // instead it waits until the held one has committed.
    let fastDone = false;
    const fast = changePetStatus(other, { id: quick.id, status: 'sold' }).finally(() => (fastDone = true));
    await until(async () => fastDone || (await waiting()) === 2, 'the later append has committed or waits');
    const rebuild = rebuildReadModels(opened.store);

    await reader.poll(); // reads while the held append is in flight
    await blocker.query('rollback');
    await Promise.all([slow, fast, rebuild]);
    await reader.poll();

    const keys = reader.seen.map(key);
    assert.ok(keys.includes(`pet-${held.id}@2`), 'the held append is read');
    assert.ok(keys.includes(`pet-${quick.id}@2`), 'the later append is read');
    const positions = reader.seen.map((stored) => stored.position);
    assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
    assert.deepEqual(await verifyReadModels(opened.store), [], 'the rebuild included the held append');
  });

  it('a follower polling all the while sees every event of many concurrent writers, once, in order', async () => {
    const reader = follower(opened.store);
    await reader.poll();
    const before = reader.seen.length;
    let writing = true;
    const following = (async () => {
      while (writing) await reader.poll();
    })();
    await Promise.all(Array.from({ length: 6 }, async (_, writer) => {
      for (let index = 0; index < 40; index++) {
        const pet = await addPet(opened.store, { name: `w${writer}-${index}`, categoryId: 1, status: 'available' });
        await changePetStatus(opened.store, { id: pet.id, status: 'pending' });
      }
    })).finally(() => (writing = false));
    await following;
    await reader.poll();

    const all = await opened.store.eventLog.readLog({ after: 0, limit: 1_000_000 });
    assert.equal(reader.seen.length - before, 6 * 40 * 2);
    assert.deepEqual(reader.seen.map(key), all.map(key), 'the follower saw the whole log, in the log\'s order');
    assert.equal(new Set(reader.seen.map(key)).size, reader.seen.length);
  });
});
