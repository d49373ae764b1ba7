import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addPet, handleCommand, handleCreation, readEvents, readState, StreamVersionConflict } from '../../application/index.ts';
import type { Aggregate } from '../../application/index.ts';
import { rebuildReadModels, verifyReadModels } from '../../adapters/store/read-models/read-model-maintenance.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

// A small aggregate known to this test alone: a tally that counts up and can be closed.
type TallyEvent =
  | { readonly type: 'TallyOpened'; readonly data: { readonly id: number } }
  | { readonly type: 'TallyCounted'; readonly data: { readonly id: number; readonly by: number } };
type TallyState = { readonly open: boolean; readonly total: number };

const TALLY: Aggregate<TallyState, TallyEvent> = {
  name: 'tally',
  streamPrefix: 'tally-',
  subject: 'tallies',
  initialState: () => ({ open: false, total: 0 }),
  evolve: (state, event) => (event.type === 'TallyOpened' ? { open: true, total: 0 } : { ...state, total: state.total + event.data.by }),
  events: {
    TallyOpened: { schemaVersion: 1, cloudEventType: 'com.example.tally.opened.v1' },
    // Version 1 counted one at a time and had no `by`.
    TallyCounted: { schemaVersion: 2, upcasters: { 1: (data) => ({ ...data, by: 1 }) }, cloudEventType: 'com.example.tally.counted.v1' },
  },
};

const count = (id: number, by: number) => (state: TallyState): TallyEvent[] => {
  if (!state.open) throw new Error(`tally ${id} is not open`);
  return [{ type: 'TallyCounted', data: { id, by } }];
};

describe('an aggregate the product does not know', () => {
  let api: TestService;
  before(async () => {
    api = await startTestService({}, { aggregates: [TALLY] });
  });
  after(() => api.stop());

  it('is created, appended to beside a pet, read, fed and rebuilt like the product\'s own', async () => {
    const ports = api.service.store;
    const pet = await addPet(ports, { name: 'Rex', categoryId: 1, status: 'available' });
    const opened = await handleCreation(ports, TALLY, (id): TallyEvent[] => [{ type: 'TallyOpened', data: { id } }]);
    assert.deepEqual([opened.version, opened.state], [1, { open: true, total: 0 }]);
    const tally = { aggregate: TALLY, streamId: `tally-${opened.id}` };
    const counted = await handleCommand(ports, [tally], ([{ state }]) => [count(opened.id, 3)(state)]);
    assert.deepEqual(counted.states[0].state, { open: true, total: 3 });
    // An event stored in the older shape is read in today's.
    await (await api.database()).db.insertInto('events').values({
      stream_id: tally.streamId, stream_version: 3, type: 'TallyCounted', data: JSON.stringify({ id: opened.id }),
      metadata: JSON.stringify({ schemaVersion: 1, recordedAt: '2026-12-01T00:00:00.000Z' }), recorded_at: '2026-12-01T00:00:00.000Z',
    }).execute();
    assert.deepEqual(await readState(ports, tally), { state: { open: true, total: 4 }, version: 3, position: (await ports.eventLog.end()) });

    const feed = await readEvents(ports, { after: opened.position - 1 });
    assert.deepEqual(feed.events.map((stored) => [stored.streamId, stored.event.type]), [
      [tally.streamId, 'TallyOpened'], [tally.streamId, 'TallyCounted'], [tally.streamId, 'TallyCounted'],
    ]);
    const response = await fetch(`${api.baseUrl}/events?after=${opened.position - 1}&type=com.example.tally.counted.v1`, { headers: { authorization: 'Bearer test-key-0123456789abcdef' } });
    assert.equal(response.status, 200);
    const events = (await response.json()) as { type: string; subject: string; data: unknown }[];
    assert.deepEqual(events.map(({ type, subject, data }) => ({ type, subject, data })), [
      { type: 'com.example.tally.counted.v1', subject: `tallies/${opened.id}`, data: { id: opened.id, by: 3 } },
      { type: 'com.example.tally.counted.v1', subject: `tallies/${opened.id}`, data: { id: opened.id, by: 1 } },
    ]);

    const database = await api.database();
    const rebuilt = await rebuildReadModels(database);
    assert.ok(rebuilt.events >= 4);
    assert.deepEqual(await verifyReadModels(database), []);
    assert.deepEqual((await api.request(`/v1/pets/${pet.id}`).then((answer) => answer.json())), pet, 'the pet\'s row came through the rebuild unchanged');
  });

  it('appends to a tally and a pet in one commit, or to neither when one moved', async () => {
    const ports = api.service.store;
    const pet = await addPet(ports, { name: 'Bo', categoryId: 1, status: 'available' });
    const { id } = await handleCreation(ports, TALLY, (tallyId): TallyEvent[] => [{ type: 'TallyOpened', data: { id: tallyId } }]);
    const outcome = await ports.eventStore.append([
      { streamId: `tally-${id}`, expected: 1, events: [{ type: 'TallyCounted', data: { id, by: 1 } }], stateAfter: { open: true, total: 1 } },
      { streamId: `pet-${pet.id}`, expected: 1, events: [{ type: 'PetStatusChanged', data: { id: pet.id, from: 'available', to: 'sold' } }], stateAfter: { kind: 'present', pet: { ...pet, status: 'sold' } } },
    ], { recordedAt: new Date().toISOString() });
    assert.deepEqual(outcome.versions, [2, 2]);
    await assert.rejects(ports.eventStore.append([
      { streamId: `tally-${id}`, expected: 2, events: [{ type: 'TallyCounted', data: { id, by: 1 } }], stateAfter: { open: true, total: 2 } },
      { streamId: `pet-${pet.id}`, expected: 1, events: [], stateAfter: undefined },
    ], { recordedAt: new Date().toISOString() }), StreamVersionConflict);
    assert.equal((await ports.eventStore.readStream(`tally-${id}`)).version, 2);
  });
});
