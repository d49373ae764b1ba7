import type { PetStatus } from './pet-status.ts';
import { assertValidStatus } from './pet-invariants.ts';
import type { NewPetFields } from './pet-invariants.ts';
import { IllegalStatusTransition } from './pet-rule-violation.ts';
import { isAllowedTransition } from './status-rules.ts';

/** The Pet as clients see it. `status` is absent when the pet has none. */
export interface Pet {
  readonly id: number;
  readonly name: string;
  readonly categoryId: number;
  readonly status?: PetStatus;
}

/** A pet came into the catalogue. `status: null` records that it was given none. */
export type PetAdded = {
  readonly type: 'PetAdded';
  readonly data: { readonly id: number; readonly name: string; readonly categoryId: number; readonly status: PetStatus | null };
};

/** A pet's status changed; `from: null` when it had none. */
export type PetStatusChanged = {
  readonly type: 'PetStatusChanged';
  readonly data: { readonly id: number; readonly from: PetStatus | null; readonly to: PetStatus };
};

export type PetEvent = PetAdded | PetStatusChanged;

export type AddPet = {
  readonly type: 'AddPet';
  /** The id comes in as data: the domain never invents identity. The fields were checked by `checkNewPet`. */
  readonly data: { readonly id: number } & NewPetFields;
};

export type ChangePetStatus = {
  readonly type: 'ChangePetStatus';
  readonly data: { readonly id: number; readonly status: unknown };
};

export type PetCommand = AddPet | ChangePetStatus;

export type PetState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'present'; readonly pet: Pet };

export function initialState(): PetState {
  return { kind: 'absent' };
}

/** Thrown by `decide` when a command does not fit whether the pet exists. */
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
      const { id, name, categoryId, status } = command.data;
      return [{ type: 'PetAdded', data: { id, name, categoryId, status } }];
    }
    case 'ChangePetStatus': {
      if (state.kind === 'absent') throw new PetStateConflict(`pet ${command.data.id} does not exist`);
      const { status } = command.data;
      assertValidStatus(status);
      const from = state.pet.status;
      if (from === status) return [];
      if (!isAllowedTransition(from, status)) throw new IllegalStatusTransition(from ?? 'no status', status);
      return [{ type: 'PetStatusChanged', data: { id: state.pet.id, from: from ?? null, to: status } }];
    }
    default:
      return unreachable(command);
  }
}

export function evolve(state: PetState, event: PetEvent): PetState {
  switch (event.type) {
    case 'PetAdded': {
      const { id, name, categoryId, status } = event.data;
      return { kind: 'present', pet: status === null ? { id, name, categoryId } : { id, name, categoryId, status } };
    }
    case 'PetStatusChanged': {
      if (state.kind === 'absent') return state;
      const { id, name, categoryId } = state.pet;
      return { kind: 'present', pet: { id, name, categoryId, status: event.data.to } };
    }
    default:
      return unreachable(event);
  }
}

export function petStreamId(id: number): string {
  return `pet-${id}`;
}

function unreachable(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
