import { evolve, initialState } from '../domain/index.ts';
import type { PetEvent, PetState } from '../domain/index.ts';
import type { VersionedPet } from './ports.ts';

/**
 * The projection: folds events into a pet's read-model state. The use cases hand the append the pet
 * their events leave (the same `evolve`); the rebuild and its check fold the log with this.
 */
export function projectPet(current: VersionedPet | undefined, events: readonly PetEvent[], versionAfter: number): VersionedPet {
  let state: PetState = current ? { kind: 'present', pet: current.pet } : initialState();
  for (const event of events) state = evolve(state, event);
  if (state.kind !== 'present') throw new Error('projection reached a pet that does not exist');
  return { pet: state.pet, version: versionAfter };
}
