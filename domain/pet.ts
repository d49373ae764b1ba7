import type { PetStatus } from './pet-status.ts';
import { IllegalStatusTransition, PetRuleViolation } from './pet-rule-violation.ts';
import { isAllowedTransition } from './status-rules.ts';
import { isPetStatus, PET_STATUSES } from './pet-status.ts';

export const NAME_MAX_CODE_POINTS = 255;
export const CATEGORY_ID_MAX = Number.MAX_SAFE_INTEGER;

// U+0000–U+001F: control characters never belong in a display name.
const CONTROL_CHARACTER = /[\u0000-\u001f]/u;
const ONLY_WHITE_SPACE = /^\s*$/u;

/**
 * Why `text` is not a name of 1 to `maxCodePoints` characters by the rule a pet's name follows (other names
 * a client gives, such as a consumer's, follow it too), in words about `field`; undefined when it is one.
 */
export function nameProblem(field: string, text: string, maxCodePoints: number): string | undefined {
  if (!text.isWellFormed()) return `${field} must be well-formed Unicode (no lone surrogates)`;
  // From 1 to `maxCodePoints` UTF-16 units is from 1 to as many code points: counted only outside that (a claim's acks name hundreds).
  if (text.length < 1 || text.length > maxCodePoints) {
    const codePoints = [...text].length;
    if (codePoints < 1 || codePoints > maxCodePoints) return `${field} must be 1 to ${maxCodePoints} characters long, got ${codePoints}`;
  }
  if (ONLY_WHITE_SPACE.test(text)) return `${field} must not be only white space`;
  if (CONTROL_CHARACTER.test(text)) return `${field} must not contain control characters (U+0000 to U+001F)`;
  return undefined;
}

export function assertValidName(name: unknown): asserts name is string {
  if (typeof name !== 'string') throw new PetRuleViolation('name', 'name must be a string');
  const problem = nameProblem('name', name, NAME_MAX_CODE_POINTS);
  if (problem !== undefined) throw new PetRuleViolation('name', problem);
}

export function assertValidCategoryId(categoryId: unknown): asserts categoryId is number {
  if (typeof categoryId !== 'number' || !Number.isInteger(categoryId) || categoryId < 1 || categoryId > CATEGORY_ID_MAX) {
    throw new PetRuleViolation('categoryId', `categoryId must be an integer from 1 to ${CATEGORY_ID_MAX}`);
  }
}

export function assertValidStatus(status: unknown): asserts status is PetStatus {
  if (!isPetStatus(status)) {
    throw new PetRuleViolation('status', `status must be one of ${PET_STATUSES.join(', ')}`);
  }
}

/** A new pet's fields, checked: what the `AddPet` command carries. `status: null` means none was given. */
export interface NewPetFields {
  readonly name: string;
  readonly categoryId: number;
  readonly status: PetStatus | null;
}

/** Every rule a new pet's fields must meet, checked once: the one way to a `NewPetFields`. */
export function checkNewPet(input: { readonly name: unknown; readonly categoryId: unknown; readonly status?: unknown }): NewPetFields {
  assertValidName(input.name);
  assertValidCategoryId(input.categoryId);
  if (input.status !== undefined) assertValidStatus(input.status);
  return { name: input.name, categoryId: input.categoryId, status: input.status ?? null };
}

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

/** A pet's status changed; `from: null` when it had none. `orderId`: the store order that moved it (reserved, sold or freed it). */
export type PetStatusChanged = {
  readonly type: 'PetStatusChanged';
  readonly data: { readonly id: number; readonly from: PetStatus | null; readonly to: PetStatus; readonly orderId?: number };
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

/** `heldBy`: the store order that holds the pet (reserved it and is placed or approved); only that order moves it. */
export type PetState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'present'; readonly pet: Pet; readonly heldBy?: number };

export function initialState(): PetState {
  return { kind: 'absent' };
}

/** A store order holds the pet: its status is the order's to move. */
export class PetReserved extends Error {
  constructor(readonly petId: number, readonly orderId: number) {
    super(`pet ${petId} is reserved by order ${orderId}: only the order moves it`);
    this.name = 'PetReserved';
  }
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
      if (state.heldBy !== undefined) throw new PetReserved(state.pet.id, state.heldBy);
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
      const { to, orderId } = event.data;
      const pet = { id, name, categoryId, status: to };
      // An order reserves its pet (pending); its next move of the pet (sold, available) ends the hold.
      return orderId !== undefined && to === 'pending' ? { kind: 'present', pet, heldBy: orderId } : { kind: 'present', pet };
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
