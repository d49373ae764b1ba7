import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkNewPet, decide, evolve, IllegalStatusTransition, initialState, PET_STATUSES, PetRuleViolation, PetStateConflict } from '../../domain/index.ts';
import type { PetCommand, PetEvent, PetState, PetStatus } from '../../domain/index.ts';

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

const added = (status: PetStatus | null): PetEvent => ({ type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: 3, status } });
const changed = (from: PetStatus | null, to: PetStatus): PetEvent => ({ type: 'PetStatusChanged', data: { id: 7, from, to } });
const changeTo = (status: unknown): PetCommand => ({ type: 'ChangePetStatus', data: { id: 7, status } });

/** AddPet for Rex with these fields, checked as every caller checks them: by `checkNewPet`. */
const addRex = (data: Partial<{ name: unknown; categoryId: unknown; status: unknown }> = {}): PetCommand => ({
  type: 'AddPet',
  data: { id: 7, ...checkNewPet({ name: 'Rex', categoryId: 3, ...data }) },
});

/** A new pet's fields that break a rule: `checkNewPet` refuses them, naming the field. */
function rejectsNewPet(data: Partial<{ name: unknown; categoryId: unknown; status: unknown }>, field: string): void {
  assert.throws(() => addRex(data), (thrown: unknown) => thrown instanceof PetRuleViolation && thrown.field === field);
}

describe('Pet decider: AddPet', () => {
  it('adds a pet with a status', () => {
    given([]).when(addRex({ status: 'available' })).then([
      { type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: 3, status: 'available' } },
    ]);
  });

  it('adds a pet without a status, recording that it has none', () => {
    given([]).when(addRex()).then([{ type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: 3, status: null } }]);
  });

  it('refuses to add a pet that already exists', () => {
    given([added(null)]).when(addRex()).thenRejects(PetStateConflict);
  });

  for (const name of ['', '   ', '\t\n', 'a\u0000b', 'tab\there', '\u001f', 'x'.repeat(256), '🐶'.repeat(256), '\ud800', 42, null]) {
    it(`rejects the name ${JSON.stringify(name)?.slice(0, 40)}`, () => {
      rejectsNewPet({ name }, 'name');
    });
  }

  for (const name of ['R', 'x'.repeat(255), '🐶'.repeat(255), 'שלום', "Robert'); DROP TABLE pets;--", ' padded ']) {
    it(`accepts the name ${JSON.stringify(name).slice(0, 40)} exactly`, () => {
      assert.deepEqual(decide(addRex({ name }), initialState()), [{ type: 'PetAdded', data: { id: 7, name, categoryId: 3, status: null } }]);
    });
  }

  for (const categoryId of [0, -1, 1.5, 2 ** 53, Number.NaN, Infinity, '1', null]) {
    it(`rejects the categoryId ${String(categoryId)}`, () => {
      rejectsNewPet({ categoryId }, 'categoryId');
    });
  }

  it('accepts the categoryId 2^53-1', () => {
    given([]).when(addRex({ categoryId: Number.MAX_SAFE_INTEGER })).then([
      { type: 'PetAdded', data: { id: 7, name: 'Rex', categoryId: Number.MAX_SAFE_INTEGER, status: null } },
    ]);
  });

  for (const status of ['lost', 'Available', '', null]) {
    it(`rejects the status ${JSON.stringify(status)}`, () => {
      rejectsNewPet({ status }, 'status');
    });
  }
});

// The status rules, written out pair by pair: from (row) → to (column).
const EXPECTED: Record<string, Record<PetStatus, 'changes' | 'no-op' | 'illegal'>> = {
  none: { available: 'changes', pending: 'changes', sold: 'changes' },
  available: { available: 'no-op', pending: 'changes', sold: 'changes' },
  pending: { available: 'changes', pending: 'no-op', sold: 'changes' },
  sold: { available: 'illegal', pending: 'illegal', sold: 'no-op' },
};

describe('Pet decider: ChangePetStatus, every pair of the status table', () => {
  for (const [fromName, row] of Object.entries(EXPECTED)) {
    const from = fromName === 'none' ? null : (fromName as PetStatus);
    for (const to of PET_STATUSES) {
      const outcome = row[to];
      it(`${fromName} → ${to}: ${outcome}`, () => {
        const scenario = given([added(from)]).when(changeTo(to));
        if (outcome === 'changes') scenario.then([changed(from, to)]);
        else if (outcome === 'no-op') scenario.then([]);
        else scenario.thenRejects(IllegalStatusTransition);
      });
    }
  }

  it('names both statuses when it refuses a change', () => {
    assert.throws(() => decide(changeTo('available'), evolve(initialState(), added('sold'))), /from sold to available/);
  });

  it('follows the state through earlier changes', () => {
    given([added('available'), changed('available', 'pending')]).when(changeTo('sold')).then([changed('pending', 'sold')]);
    given([added('available'), changed('available', 'sold')]).when(changeTo('pending')).thenRejects(IllegalStatusTransition);
  });

  it('refuses an unknown status as a rule violation', () => {
    given([added('available')]).when(changeTo('lost')).thenRejects(PetRuleViolation, 'status');
  });

  it('refuses to change a pet that does not exist', () => {
    given([]).when(changeTo('sold')).thenRejects(PetStateConflict);
  });

  it('holds for any sequence of changes: only legal moves are recorded, and nothing leaves sold', () => {
    const status = fc.constantFrom(...PET_STATUSES);
    fc.assert(
      fc.property(fc.option(status, { nil: null }), fc.array(status, { maxLength: 20 }), (start, targets) => {
        let state = evolve(initialState(), added(start));
        for (const to of targets) {
          const before = state.kind === 'present' ? state.pet.status ?? null : null;
          let events: PetEvent[];
          try {
            events = decide(changeTo(to), state);
          } catch (error) {
            assert.ok(error instanceof IllegalStatusTransition);
            assert.equal(before, 'sold');
            continue;
          }
          if (before === to) assert.deepEqual(events, []);
          else assert.deepEqual(events, [changed(before, to)]);
          state = events.reduce(evolve, state);
        }
      }),
    );
  });
});

describe('Pet evolve', () => {
  it('starts absent and is present after PetAdded', () => {
    assert.deepEqual(initialState(), { kind: 'absent' });
    assert.deepEqual(evolve(initialState(), added(null)), { kind: 'present', pet: { id: 7, name: 'Rex', categoryId: 3 } });
  });

  it('takes the new status from PetStatusChanged', () => {
    const state = [added('available'), changed('available', 'pending')].reduce(evolve, initialState());
    assert.deepEqual(state, { kind: 'present', pet: { id: 7, name: 'Rex', categoryId: 3, status: 'pending' } });
  });
});
