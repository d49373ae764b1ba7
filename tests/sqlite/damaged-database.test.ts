import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { rebuildReadModels } from '../../adapters/store/read-models/read-model-maintenance.ts';
import { writeBulkLog } from '../support/bulk-log.ts';
import { runPetstore } from '../support/cli.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';
import type { TemporaryDirectory } from '../support/temporary-store.ts';

const PAGE = 4096;

describe('a damaged SQLite file', () => {
  let directory: TemporaryDirectory;
  let sound: string;
  let damaged: string;

  before(async () => {
    directory = temporaryDirectory('damaged');
    sound = directory.file('sound.db');
    damaged = directory.file('damaged.db');
    for (const file of [sound, damaged]) {
      const store = await openSqlitePetStore(file);
      await writeBulkLog(store.db, 3000);
      await rebuildReadModels(store);
      await store.close();
    }
    // Four pages in the middle of the file overwritten with random bytes.
    const pages = statSync(damaged).size / PAGE;
    const random = seededRandom(16);
    const fd = openSync(damaged, 'r+');
    for (let page = Math.floor(pages / 2); page < Math.floor(pages / 2) + 4; page++) {
      writeSync(fd, Buffer.from(Array.from({ length: PAGE }, () => Math.floor(random() * 256))), 0, PAGE, page * PAGE);
    }
    closeSync(fd);
  });
  after(() => directory.remove());

  it('is refused at the start, naming the database and the reason, with no stack trace', async () => {
    const service = startServiceProcess({ PETSTORE_DATABASE: damaged, PETSTORE_API_KEYS: 'check-key-0123456789abcdef' });
    try {
      const { code } = await service.exited;
      assert.equal(code, 1);
      const stderr = service.stderr();
      assert.match(stderr, /petstore failed to start: the database .*damaged\.db \(PETSTORE_DATABASE\) (is damaged|cannot be)/);
      assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
      assert.doesNotMatch(service.stdout(), /listening on/);
    } finally {
      service.cleanup();
    }
  });

  it('is reported by `petstore check`, exit 1; a sound file passes it, exit 0', async () => {
    const report = await runPetstore(['check'], { PETSTORE_DATABASE: damaged });
    assert.equal(report.code, 1, report.stderr);
    assert.match(report.stdout, /problem\(s\): the database is damaged/);
    const fine = await runPetstore(['check'], { PETSTORE_DATABASE: sound });
    assert.equal(fine.code, 0, fine.stderr);
    assert.match(fine.stdout, /the database is sound/);
  });
});
