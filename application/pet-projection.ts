import { evolve, initialState } from '../domain/index.ts';
import type { PetEvent, PetState } from '../domain/index.ts';
import type { VersionedPet } from './ports.ts';

/**
 * The inline projection: folds newly appended events into the current row.
 * Every store runs this inside the append's transaction, so reads see writes at once.
 */
export function projectPet(current: VersionedPet | undefined, events: readonly PetEvent[], versionAfter: number): VersionedPet {
  let state: PetState = current ? { kind: 'present', pet: current.pet } : initialState();
  for (const event of events) state = evolve(state, event);
  if (state.kind !== 'present') throw new Error('projection reached a pet that does not exist');
  return { pet: state.pet, version: versionAfter };
}
