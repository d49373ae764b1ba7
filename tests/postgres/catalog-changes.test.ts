import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, changePetStatus } from '../../application/index.ts';
import type { CommitSignal, StoredEvent } from '../../application/index.ts';
import { postgresCatalogChanges } from '../../adapters/store/postgres/postgres-catalog-changes.ts';
import { readLogHead } from '../../adapters/store/postgres/postgres-commit-signal.ts';
import type { PetChange } from '../../adapters/store/catalog-changes.ts';
import { openTestPostgresStore, testPostgresEngine } from '../support/postgres.ts';
import type { TestStore } from '../support/postgres.ts';

/** A signal that never tells: as if another instance's notification had not arrived yet. */
const silent: CommitSignal = { onCommitted: () => () => {} };

describe(`the catalogue's changes on PostgreSQL, read from the log (${testPostgresEngine()})`, () => {
  let opened: TestStore;

  before(async () => {
    opened = await openTestPostgresStore();
  });
  after(() => opened.close());

  /** The changes over the test store, counting its looks at the log; `hold` keeps each look waiting until released. */
  function watched() {
    const { store } = opened;
    const looks: number[] = [];
    let hold: Promise<void> | undefined;
    const log = {
      async readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
        looks.push(afterPosition);
        await hold;
        return store.eventStore.readAll(afterPosition, limit);
      },
      head: () => readLogHead(store.db),
    };
    const changes = postgresCatalogChanges(log, silent);
    const heard: (readonly PetChange[] | undefined)[] = [];
    changes.subscribe((changed) => heard.push(changed));
    return { changes, heard, looks, holdLooks: () => {
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      return () => {
        hold = undefined;
        release();
      };
    } };
  }

  it('tells, before a look resolves, every commit made before it was asked for, with the pets and statuses it changed', async () => {
    const { changes, heard } = watched();
    await changes.refresh();
    assert.deepEqual(heard, [undefined], 'the first look finds where the log ends');
    const pet = await addPet(opened.store, { name: 'unnotified', categoryId: 1, status: 'available' });
    await changes.refresh();
    assert.deepEqual(heard.at(-1), [{ id: pet.id, statuses: ['available'] }]);
    await changePetStatus(opened.store, { id: pet.id, status: 'pending' });
    await changePetStatus(opened.store, { id: pet.id, status: 'sold' });
    await changes.refresh();
    assert.deepEqual(heard.at(-1), [{ id: pet.id, statuses: ['available', 'pending'] }, { id: pet.id, statuses: ['pending', 'sold'] }]);
    const told = heard.length;
    await changes.refresh();
    assert.equal(heard.length, told, 'nothing new: nothing told');
  });

  it('answers every caller of one turn with one look, and a caller during a look with the next one', async () => {
    const { changes, looks, holdLooks } = watched();
    await changes.refresh();
    const before = looks.length;
    const release = holdLooks();
    const first = [changes.refresh(), changes.refresh(), changes.refresh()];
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(looks.length, before + 1, 'one look for the three callers');
    // Committed while that look is in flight: the caller after it must not be answered by it.
    const late = await addPet(opened.store, { name: 'during the look', categoryId: 1, status: 'pending' });
    let heardLate = false;
    changes.subscribe((changed) => {
      if (changed?.some((change) => change.id === late.id)) heardLate = true;
    });
    const second = [changes.refresh(), changes.refresh()];
    release();
    await Promise.all([...first, ...second]);
    assert.equal(looks.length, before + 2, 'one more look for the callers that came during the first');
    assert.ok(heardLate, 'the later callers were answered after the commit was told');
  });
});
