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

/** A status change the status rules do not allow (e.g. anything out of `sold`). */
export class IllegalStatusTransition extends Error {
  readonly from: string;
  readonly to: string;

  constructor(from: string, to: string) {
    super(`a pet cannot change from ${from} to ${to}`);
    this.name = 'IllegalStatusTransition';
    this.from = from;
    this.to = to;
  }
}
