import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openTemporaryStore } from '../support/temporary-store.ts';
import type { TemporarySqliteStore } from '../support/temporary-store.ts';
import { declaredShape, sqliteShape } from '../support/declared-schema.ts';

describe('SQLite schema', () => {
  let opened: TemporarySqliteStore;
  before(async () => {
    opened = await openTemporaryStore('sqlite');
  });
  after(() => opened.close());

  it('migrating an empty database gives exactly the tables schema.ts declares', async () => {
    assert.deepEqual(await sqliteShape(opened.store.db), declaredShape('sqlite'));
  });
});
