export type PetField = 'name' | 'categoryId' | 'status';

/** A command broke one of the Pet's invariants. Carries the field so callers can say which. */
export class PetRuleViolation extends Error {
  readonly field: PetField;

  constructor(field: PetField, message: string) {
    super(message);
    this.name = 'PetRuleViolation';
    this.field = field;
  }
}
