import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { sql } from 'kysely';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { sqlStoreBeneath } from '../../adapters/store/open-store.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import { capturedLog } from '../support/captured-log.ts';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';

const pet = (name: string) => ({ name, categoryId: 1, status: 'available' });

/** Checks a 503 storage-fault answer: the Error body, `unavailable`, and Retry-After in whole seconds. */
async function assertUnavailable(response: Response, message: RegExp): Promise<void> {
  assert.equal(response.status, 503);
  assert.match(response.headers.get('retry-after') ?? '', /^[1-9]\d*$/, 'Retry-After in whole seconds');
  const error = await readError(response);
  assert.equal(error.code, 'unavailable');
  assert.match(error.message, message);
}

/** Polls /readyz until it answers `status` (each probe is itself rate-limited by the store, so this settles). */
async function readyzUntil(api: TestService, status: number): Promise<Response> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const response = await api.request('/readyz', { key: null });
    if (response.status === status) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/readyz did not answer ${status} within 100 probes`);
}

function chattr(flag: '+i' | '-i', ...files: string[]): void {
  execFileSync('chattr', [flag, ...files]);
}

/** Runs `work` on 20 requests at a time until `count` are done. */
async function inParallel(count: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 20 }, async () => {
    while (next < count) await work(next++);
  }));
}

describe('storage faults on SQLite', () => {
  it('answers 503 with Retry-After while the disk is full, says so on /readyz, logs it in a few short lines, and writes again when space returns', async (t) => {
    const log = capturedLog();
    const api = await startTestService({}, { logger: log.logger });
    try {
      assert.equal((await api.createPet(pet('before'))).status, 201);
      // SQLite's own limit on the file's pages answers SQLITE_FULL exactly as a full filesystem does; the
      // limit holds per connection, so it is set on the one the service's writes commit on.
      const store = sqlStoreBeneath(api.service.store) as SqlitePetStore;
      const { page_count: pages } = (await sql<{ page_count: number }>`pragma page_count`.execute(store.db)).rows[0]!;
      await store.writerPragma(`max_page_count = ${pages}`);
      const big = 'x'.repeat(180);
      const statuses = new Map<number, number>();
      let readyDuringFault: Promise<Response> | undefined;
      await inParallel(2000, async (index) => {
        // Asked while writes fail: the probe's write check shares their group and their fault.
        if (index === 1000) readyDuringFault = api.request('/readyz', { key: null });
        const response = await api.createPet(pet(`${big} ${index}`));
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status === 503) await assertUnavailable(response, /disk is full/);
        else await response.arrayBuffer();
      });
      // The first few may still fit in pages the file has free.
      assert.deepEqual([...statuses.keys()].filter((status) => status !== 201 && status !== 503), [], JSON.stringify([...statuses]));
      assert.ok((statuses.get(503) ?? 0) >= 1900, `refused: ${JSON.stringify([...statuses])}`);

      const notReady = await readyDuringFault!;
      assert.equal(notReady.status, 503);
      assert.match((await readError(notReady)).message, /not ready: writes fail: .*disk is full.*SQLITE_FULL/);

      const text = log.lines.map((line) => JSON.stringify(line));
      const bytes = text.reduce((sum, line) => sum + line.length + 1, 0);
      assert.ok(bytes < 1_000_000, `2,000 failed writes logged ${bytes} bytes`);
      t.diagnostic(`${statuses.get(503)} writes refused: ${log.lines.length} log lines, ${bytes} bytes`);
      assert.ok(text.every((line) => line.length < 500), `a line of ${text.find((line) => line.length >= 500)}`);
      assert.equal(log.lines.filter((line) => /storage fault/.test(line.msg)).length, 1, 'the fault said once');
      assert.ok(!text.some((line) => line.includes('    at ')), 'no stack trace');

      await store.writerPragma('max_page_count = 1073741823');
      assert.equal((await api.createPet(pet('after'))).status, 201, 'writes again without a restart');
      assert.equal((await readyzUntil(api, 200)).status, 200);
    } finally {
      await api.stop();
    }
  });

  it('answers 503 while the file and its log are made immutable (chattr +i), and writes again once they are not', async () => {
    const api = await startTestService();
    const file = `${api.directory}/petstore.db`;
    try {
      assert.equal((await api.createPet(pet('before'))).status, 201);
      chattr('+i', file, `${file}-wal`);
      try {
        await assertUnavailable(await api.createPet(pet('during')), /disk failed|cannot be written/);
        assert.match((await readError(await readyzUntil(api, 503))).message, /writes fail/);
      } finally {
        chattr('-i', file, `${file}-wal`);
      }
      assert.equal((await api.createPet(pet('after'))).status, 201);
      await readyzUntil(api, 200);
      const names = ((await (await api.request('/v1/pets')).json()) as { name: string }[]).map((each) => each.name);
      assert.deepEqual(names, ['before', 'after']);
    } finally {
      await api.stop();
    }
  });

  it('starts on a file it cannot write, not ready and answering 503 to writes, and writes once the file is made writable', async () => {
    const directory = temporaryDirectory('unwritable');
    const file = directory.file('petstore.db');
    const prepared = await openSqlitePetStore(file);
    await prepared.close();
    chattr('+i', file);
    let api: TestService | undefined;
    try {
      api = await startTestService({ PETSTORE_DATABASE: file });
      assert.match((await readError(await readyzUntil(api, 503))).message, /not ready: writes fail: the database file cannot be written/);
      await assertUnavailable(await api.createPet(pet('refused')), /cannot be written/);
      assert.equal((await api.request('/v1/pets')).status, 200, 'reads go on');
      chattr('-i', file);
      await readyzUntil(api, 200);
      assert.equal((await api.createPet(pet('accepted'))).status, 201);
    } finally {
      try {
        chattr('-i', file);
      } finally {
        await api?.stop();
        directory.remove();
      }
    }
  });

  it('answers probes and listings while another connection holds the write lock, and commits the waiting write once it is released', async () => {
    const api = await startTestService();
    const other = await openSqliteConnection(`${api.directory}/petstore.db`);
    try {
      assert.equal((await api.createPet(pet('before'))).status, 201);
      other.exec('BEGIN IMMEDIATE');
      let writeAnswered = false;
      const write = api.createPet(pet('waiting')).then((response) => {
        writeAnswered = true;
        return response;
      });
      // The write has asked for the lock by the time these answer: both run on the same event loop after it.
      const healthz = await api.request('/healthz', { key: null });
      const listing = await api.request('/v1/pets');
      assert.equal(healthz.status, 200);
      assert.equal(listing.status, 200);
      assert.equal(((await listing.json()) as unknown[]).length, 1);
      assert.equal(writeAnswered, false, 'the probe and the listing answered while the write waited for the lock');
      other.exec('COMMIT');
      assert.equal((await write).status, 201);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await api.stop();
    }
  });
});
