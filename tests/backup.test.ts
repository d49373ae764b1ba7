import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { openSqlite } from '../adapters/store/sqlite/open-sqlite.ts';
import { runPetstore } from './support/cli.ts';
import { temporaryDirectory } from './support/temporary-store.ts';
import type { TemporaryDirectory } from './support/temporary-store.ts';
import { startTestService, TEST_API_KEY } from './support/test-service.ts';
import type { TestService } from './support/test-service.ts';

const WRITERS = 8;

let directory: TemporaryDirectory;
let api: TestService;
let database: string;

before(async () => {
  directory = temporaryDirectory('backup');
  database = directory.file('petstore.db');
  api = await startTestService({ PETSTORE_DATABASE: database });
});

after(async () => {
  await api.stop();
  directory.remove();
});

describe('petstore backup FILE', () => {
  it('copies the store while it serves and writes: the copy opens, passes projection verify, and holds every write acknowledged before it began', async () => {
    const acknowledged = new Map<number, string>();
    let writing = true;
    let sequence = 0;
    const writer = async () => {
      while (writing) {
        const name = `pet ${sequence++}`;
        const response = await fetch(`${api.baseUrl}/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name, categoryId: 1 + (sequence % 5) }),
        });
        const body = (await response.json()) as { id: number };
        assert.equal(response.status, 201);
        acknowledged.set(body.id, name);
        // Status changes too, so the copy holds streams of more than one event.
        if (body.id % 3 === 0) {
          const changed = await fetch(`${api.baseUrl}/pets/${body.id}`, {
            method: 'PATCH',
            headers: { authorization: `Bearer ${TEST_API_KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({ status: 'available' }),
          });
          await changed.arrayBuffer();
          assert.equal(changed.status, 200);
        }
      }
    };
    const writers = Array.from({ length: WRITERS }, writer);
    while (acknowledged.size < 200) await new Promise((resolveWait) => setTimeout(resolveWait, 10));

    const before = new Map(acknowledged);
    const target = directory.file('copy.db');
    const backup = await runPetstore(['backup', target], { PETSTORE_DATABASE: database });
    const during = acknowledged.size - before.size;
    writing = false;
    await Promise.all(writers);

    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /^backed up .* to .*copy\.db/);
    assert.ok(during > 0, 'writes went on while the backup ran');
    assert.deepEqual(readdirSync(directory.path).filter((name) => name.includes('.tmp')), [], 'no temporary file is left');

    const copy = await openSqlite(target, { migrate: false });
    try {
      const rows = await copy.db.selectFrom('pets').select(['id', 'name']).execute();
      const names = new Map(rows.map((row) => [row.id, row.name]));
      const missing = [...before].filter(([id, name]) => names.get(id) !== name);
      assert.deepEqual(missing, [], 'every write acknowledged before the backup began is in the copy');
    } finally {
      await copy.db.destroy();
    }
    const verified = await runPetstore(['projection', 'verify'], { PETSTORE_DATABASE: target });
    assert.equal(verified.code, 0, verified.stdout);
    assert.match(verified.stdout, /the read model matches the log/);
  });

  it('replaces an existing file at FILE', async () => {
    const target = directory.file('replaced.db');
    writeFileSync(target, 'an older backup');
    const backup = await runPetstore(['backup', target], { PETSTORE_DATABASE: database });
    assert.equal(backup.code, 0, backup.stderr);
    const copy = await openSqlite(target, { migrate: false });
    try {
      const { count } = await copy.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
      assert.ok(Number(count) > 0);
    } finally {
      await copy.db.destroy();
    }
  });

  it('exits 1 without creating anything when there is no store, and points PostgreSQL to pg_dump', async () => {
    const target = directory.file('never.db');
    const missing = await runPetstore(['backup', target], { PETSTORE_DATABASE: directory.file('absent.db') });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no SQLite store at .*absent\.db/);
    assert.equal(existsSync(directory.file('absent.db')), false);
    assert.equal(existsSync(target), false);
    const postgres = await runPetstore(['backup', target], { PETSTORE_DATABASE: 'postgres://user:secret@127.0.0.1:1/petstore' });
    assert.equal(postgres.code, 1);
    assert.match(postgres.stderr, /pg_dump/);
    assert.doesNotMatch(postgres.stderr, /secret/);
  });

  it('names the missing folder of FILE as typed, never a temporary file of its own', async () => {
    const target = directory.file('nowhere/x.db');
    const answer = await runPetstore(['backup', target], { PETSTORE_DATABASE: database });
    assert.equal(answer.code, 1);
    assert.equal(answer.stderr, `petstore: cannot write ${target}: the folder ${directory.file('nowhere')} does not exist\n`);
  });

  it('refuses a FILE that is a folder, saying so', async () => {
    const answer = await runPetstore(['backup', directory.path], { PETSTORE_DATABASE: database });
    assert.equal(answer.code, 1);
    assert.equal(answer.stderr, `petstore: cannot write ${directory.path}: it is a folder; name a file in it\n`);
  });

  it('refuses to write over the store itself', async () => {
    const same = await runPetstore(['backup', database], { PETSTORE_DATABASE: database });
    assert.equal(same.code, 1);
    assert.match(same.stderr, /cannot replace the store/);
  });
});
