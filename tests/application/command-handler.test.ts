import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../../domain/index.ts';
import type { PetEvent, PetState } from '../../domain/index.ts';
import { handleCreation } from '../../application/index.ts';
import type { EventStore } from '../../application/index.ts';
import { PET_AGGREGATE } from '../../application/pets/pet-aggregate.ts';
import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';

const fields = { name: 'Rex', categoryId: 1, status: null };

/** `decide` for a new pet, counting its calls. */
function counted() {
  const calls: number[] = [];
  const decideAddPet = (id: number, state: PetState): readonly PetEvent[] => {
    calls.push(id);
    return decide({ type: 'AddPet', data: { id, ...fields } }, state);
  };
  return { calls, decideAddPet };
}

describe('a creation, handled', () => {
  it('decides once: the answer is the decision the store appended, not a second one after the commit', async () => {
    const store = createInMemoryPetStore();
    const { calls, decideAddPet } = counted();
    const outcome = await handleCreation(store, PET_AGGREGATE, decideAddPet);
    assert.deepEqual(calls, [1]);
    assert.equal(outcome.id, 1);
    assert.deepEqual(outcome.events, store.log.map((stored) => stored.event));
  });

  it('answers with the last build when the store builds again under another id (a batch that ran again), deciding once a build', async () => {
    const inner = createInMemoryPetStore();
    // A store whose first batch failed after building: it builds the creation again, under the next id, and commits that.
    const buildsTwice: EventStore = {
      ...inner.eventStore,
      create: (aggregate, build, reads) => inner.eventStore.create(aggregate, (id, read) => {
        build(id + 100, read);
        return build(id, read);
      }, reads),
    };
    const { calls, decideAddPet } = counted();
    const outcome = await handleCreation({ ...inner, eventStore: buildsTwice }, PET_AGGREGATE, decideAddPet);
    assert.deepEqual(calls, [101, 1]);
    assert.equal(outcome.id, 1);
    assert.deepEqual(outcome.state, { kind: 'present', pet: { id: 1, name: 'Rex', categoryId: 1 } });
    assert.deepEqual(outcome.events, inner.log.map((stored) => stored.event));
  });
});
