import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { sqliteSqlDialect } from '../../adapters/store/sqlite/sqlite-sql-dialect.ts';
import type { LogPage } from '../../adapters/store/sql-dialect.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import { writeBulkLog } from '../support/bulk-log.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';
import type { TemporarySqliteStore } from '../support/temporary-store.ts';

const PAGE = 1000;

async function collect(pages: AsyncIterable<LogPage>): Promise<LogPage[]> {
  const all: LogPage[] = [];
  for await (const page of pages) all.push(page);
  return all;
}

// Node only (deno.json leaves it out): on Deno the dialect reads on the caller's connection, its driver being node:sqlite.
describe('reading the SQLite log ahead on a thread', () => {
  let opened: TemporarySqliteStore;
  let store: SqlPetStore;

  before(async () => {
    opened = await openTemporaryStore('sqlite');
    store = opened.store;
    await writeBulkLog(store.db, 12_000);
  });
  after(() => opened.close());

  it('gives the pages the caller\'s connection gives, from any position', async () => {
    for (const from of [0, 4321]) {
      const ahead = await sqliteSqlDialect.readLogAhead!(store.db, from, PAGE);
      assert.ok(ahead, 'a file and a long log: read on a thread');
      const expected: LogPage[] = [];
      for (let page = await sqliteSqlDialect.readLogPage(store.db, from, PAGE); page; page = await sqliteSqlDialect.readLogPage(store.db, page.last, PAGE)) expected.push(page);
      assert.ok(expected.length > 10);
      assert.deepEqual(await collect(ahead), expected);
    }
  });

  // A thread left running would keep this file's process alive, and the run would time out.
  it('stops its thread when the caller stops early', async () => {
    const ahead = (await sqliteSqlDialect.readLogAhead!(store.db, 0, PAGE))!;
    let taken = 0;
    for await (const page of ahead) {
      assert.ok(page.last > 0);
      if (++taken === 2) break;
    }
    assert.equal(taken, 2);
  });

  it('sees what commits after it started, as the caller would', async () => {
    const { last } = await store.db.selectFrom('events').select((eb) => eb.fn.max('position').as('last')).executeTakeFirstOrThrow();
    const ahead = (await sqliteSqlDialect.readLogAhead!(store.db, 0, PAGE))!;
    await writeBulkLog(store.db, 10, 100_000);
    const pages = await collect(ahead);
    assert.ok(pages.at(-1)!.last > last);
  });

  it('reads in place on an in-memory database, which no thread can open', async () => {
    const memory = await openSqlitePetStore(':memory:');
    try {
      await writeBulkLog(memory.db, 12_000);
      assert.equal(await sqliteSqlDialect.readLogAhead!(memory.db, 0, PAGE), undefined);
    } finally {
      await memory.close();
    }
  });
});
