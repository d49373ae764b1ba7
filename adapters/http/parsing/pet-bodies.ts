import type { NewPet } from '../../../application/index.ts';
import type { PetStatus } from '../../../domain/index.ts';
import { NewPetSchema, StatusPatchSchema } from '../../../contract/schemas.ts';
import { bodyShape, readBody } from './checked-body.ts';
import type { JsonBody } from './json-body.ts';

// The rules on a new pet's values are the domain's (`checkNewPet`), checked once by the use case.
const NEW_PET = bodyShape(NewPetSchema, 'a NewPet', { checkValues: false });
const STATUS_PATCH = bodyShape(StatusPatchSchema, 'a status change');

/** POST /pets: the NewPet's fields as sent, with a 400 that names the field for anything unknown or missing. */
export function readNewPet(sent: JsonBody): NewPet {
  return readBody(sent, NEW_PET) as NewPet;
}

/** PATCH /pets/{petId}: `{ "status": … }` and nothing else. */
export function readStatusPatch(sent: JsonBody): { status: PetStatus } {
  return readBody(sent, STATUS_PATCH);
}
