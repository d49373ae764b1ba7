import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decide, evolve, initialState, PetRuleViolation, PetStateConflict } from '../../domain/index.ts';
import type { PetCommand, PetEvent, PetState } from '../../domain/index.ts';

/** given past events, when a command, then new events (or an error). */
function given(events: PetEvent[]) {
  const state = events.reduce<PetState>(evolve, initialState());
  return {
    when(command: PetCommand) {
      return {
        then(expected: PetEvent[]) {
          assert.deepEqual(decide(command, state), expected);
        },
        thenRejects(error: new (...args: never[]) => Error, field?: string) {
          assert.throws(() => decide(command, state), (thrown: unknown) => {
            assert.ok(thrown instanceof error, `expected ${error.name}, got ${String(thrown)}`);
            if (field !== undefined) assert.equal((thrown as PetRuleViolation).field, field);
            return true;
          });
        },
      };
    },
  };
}

const addRex = (data: Partial<{ name: unknown; categoryId: unknown; status: unknown }> = {}): PetCommand => ({
  type: 'AddPet',
  data: { id: 7, name: 'Rex', categoryId: 3, ...data },
});

describe('Pet decider: AddPet', () => {
  it('adds a pet with a status', () => {
    given([]).when(addRex({ status: 'available' })).then([
      { type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: 3, status: 'available' } },
    ]);
  });

  it('adds a pet without a status, leaving the field out', () => {
    given([]).when(addRex()).then([{ type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: 3 } }]);
  });

  it('refuses to add a pet that already exists', () => {
    given([{ type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: 3 } }]).when(addRex()).thenRejects(PetStateConflict);
  });

  for (const name of ['', '   ', '\t\n', 'a\u0000b', 'tab\there', '\u001f', 'x'.repeat(256), '🐶'.repeat(256), '\ud800', 42, null]) {
    it(`rejects the name ${JSON.stringify(name)?.slice(0, 40)}`, () => {
      given([]).when(addRex({ name })).thenRejects(PetRuleViolation, 'name');
    });
  }

  for (const name of ['R', 'x'.repeat(255), '🐶'.repeat(255), 'שלום', "Robert'); DROP TABLE pets;--", ' padded ']) {
    it(`accepts the name ${JSON.stringify(name).slice(0, 40)} exactly`, () => {
      const [event] = decide(addRex({ name }), initialState());
      assert.equal(event!.data.name, name);
    });
  }

  for (const categoryId of [0, -1, 1.5, 2 ** 53, Number.NaN, Infinity, '1', null]) {
    it(`rejects the categoryId ${String(categoryId)}`, () => {
      given([]).when(addRex({ categoryId })).thenRejects(PetRuleViolation, 'categoryId');
    });
  }

  it('accepts the categoryId 2^53-1', () => {
    const [event] = decide(addRex({ categoryId: Number.MAX_SAFE_INTEGER }), initialState());
    assert.equal(event!.data.categoryId, Number.MAX_SAFE_INTEGER);
  });

  for (const status of ['lost', 'Available', '', null]) {
    it(`rejects the status ${JSON.stringify(status)}`, () => {
      given([]).when(addRex({ status })).thenRejects(PetRuleViolation, 'status');
    });
  }
});

describe('Pet evolve', () => {
  it('starts absent and is present after PetAdded', () => {
    assert.deepEqual(initialState(), { kind: 'absent' });
    const pet = { id: 1, name: 'Rex', categoryId: 2 };
    assert.deepEqual(evolve(initialState(), { type: 'PetAdded', data: pet }), { kind: 'present', pet });
  });
});
