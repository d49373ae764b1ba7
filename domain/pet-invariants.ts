import { isPetStatus, PET_STATUSES } from './pet-status.ts';
import type { PetStatus } from './pet-status.ts';
import { PetRuleViolation } from './pet-rule-violation.ts';

export const NAME_MAX_CODE_POINTS = 255;
export const CATEGORY_ID_MAX = Number.MAX_SAFE_INTEGER;

// U+0000–U+001F: control characters never belong in a display name.
const CONTROL_CHARACTER = /[\u0000-\u001f]/u;
const ONLY_WHITE_SPACE = /^\s*$/u;

export function assertValidName(name: unknown): asserts name is string {
  if (typeof name !== 'string') throw new PetRuleViolation('name', 'name must be a string');
  if (!name.isWellFormed()) throw new PetRuleViolation('name', 'name must be well-formed Unicode (no lone surrogates)');
  const codePoints = [...name].length;
  if (codePoints < 1 || codePoints > NAME_MAX_CODE_POINTS) {
    throw new PetRuleViolation('name', `name must be 1 to ${NAME_MAX_CODE_POINTS} characters long, got ${codePoints}`);
  }
  if (ONLY_WHITE_SPACE.test(name)) throw new PetRuleViolation('name', 'name must not be only white space');
  if (CONTROL_CHARACTER.test(name)) throw new PetRuleViolation('name', 'name must not contain control characters (U+0000 to U+001F)');
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
