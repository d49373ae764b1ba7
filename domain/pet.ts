import type { PetStatus } from './pet-status.ts';
import { assertValidNewPet } from './pet-invariants.ts';

/** The Pet as clients see it. `status` is absent when the pet was created without one. */
export interface Pet {
  readonly id: number;
  readonly name: string;
  readonly categoryId: number;
  readonly status?: PetStatus;
}

export type PetAdded = {
  readonly type: 'PetAdded';
  readonly data: Pet;
};

export type PetEvent = PetAdded;

export type AddPet = {
  readonly type: 'AddPet';
  /** The id comes in as data: the domain never invents identity. */
  readonly data: { readonly id: number; readonly name: unknown; readonly categoryId: unknown; readonly status?: unknown };
};

export type PetCommand = AddPet;

export type PetState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'present'; readonly pet: Pet };

export function initialState(): PetState {
  return { kind: 'absent' };
}

/** Thrown by `decide` when a command does not fit the pet's current state. */
export class PetStateConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PetStateConflict';
  }
}

export function decide(command: PetCommand, state: PetState): PetEvent[] {
  switch (command.type) {
    case 'AddPet': {
      if (state.kind === 'present') throw new PetStateConflict(`pet ${state.pet.id} already exists`);
      assertValidNewPet(command.data);
      const { id, name, categoryId, status } = command.data;
      const pet: Pet = status === undefined ? { id, name, categoryId } : { id, name, categoryId, status };
      return [{ type: 'PetAdded', data: pet }];
    }
    default:
      return unreachable(command.type);
  }
}

export function evolve(state: PetState, event: PetEvent): PetState {
  switch (event.type) {
    case 'PetAdded':
      return { kind: 'present', pet: event.data };
    default:
      return unreachable(event.type);
  }
}

export function petStreamId(id: number): string {
  return `pet-${id}`;
}

function unreachable(value: never): never {
  throw new Error(`unhandled case: ${String(value)}`);
}
