import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openTemporaryStore } from '../support/temporary-store.ts';
import type { TemporaryPostgresStore } from '../support/temporary-store.ts';
import { declaredShape, postgresShape } from '../support/declared-schema.ts';
import { testPostgresEngine } from '../support/postgres.ts';

describe(`PostgreSQL schema (${testPostgresEngine()})`, () => {
  let opened: TemporaryPostgresStore;
  before(async () => {
    opened = await openTemporaryStore('postgres');
  });
  after(() => opened.close());

  it('migrating an empty database gives exactly the tables schema.ts declares', async () => {
    assert.deepEqual(await postgresShape(opened.store.db), declaredShape('postgres'));
  });
});
