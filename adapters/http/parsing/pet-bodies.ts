import type { TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { CATEGORY_ID_MAX } from '../../../domain/index.ts';
import type { NewPet } from '../../../application/index.ts';
import type { PetStatus } from '../../../domain/index.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import { exactInteger, topLevelNumberText } from './exact-json-integer.ts';
import { readJsonObject } from './json-body.ts';
import type { JsonBody } from './json-body.ts';
import { NewPetSchema, StatusPatchCheck, StatusPatchSchema } from '../../../contract/schemas.ts';

/**
 * POST /pets: the NewPet's fields as sent, with a 400 that names the field for anything unknown or
 * missing; the rules on their values are the domain's (`checkNewPet`), checked once by the use case.
 */
export function readNewPet(sent: JsonBody): NewPet {
  const { body, raw } = readJsonObject(sent, 'a NewPet', NEW_PET_FIELDS);
  for (const field of NewPetSchema.required) {
    if (!Object.hasOwn(body, field)) throw new HttpProblem('invalid_body', `${field} is required`);
  }
  if (typeof body.categoryId === 'number') assertSentExactly(raw, body.categoryId);
  return body as unknown as NewPet;
}

const NEW_PET_FIELDS = Object.keys(NewPetSchema.properties);
const STATUS_PATCH_FIELDS = Object.keys(StatusPatchSchema.properties);

/** PATCH /pets/{petId}: `{ "status": … }` and nothing else. */
export function readStatusPatch(sent: JsonBody): { status: PetStatus } {
  const { body } = readJsonObject(sent, 'a status change', STATUS_PATCH_FIELDS);
  return checked(StatusPatchCheck, body, ['status']);
}

function checked<T extends TSchema>(check: TypeCheck<T>, body: Record<string, unknown>, required: readonly string[]): T['static'] {
  for (const field of required) {
    if (!Object.hasOwn(body, field)) throw new HttpProblem('invalid_body', `${field} is required`);
  }
  if (!check.Check(body)) {
    const first = check.Errors(body).First()!;
    throw new HttpProblem('invalid_body', `${first.path.slice(1) || 'body'}: ${first.message}`);
  }
  return body;
}

// A number with a fraction or an exponent has a digit before its "." or "e"; one of 16 digits or more may not fit a double.
const MAYBE_INEXACT_NUMBER = /[0-9][.eE]|[0-9]{16}/;

/** JSON.parse may round a number (9007199254740993, 1.0000000000000001): refuse one it did not read exactly. */
function assertSentExactly(raw: string, parsed: number): void {
  // Without such a number anywhere in the text, every number in it is an integer of at most 15 digits, read exactly.
  if (!MAYBE_INEXACT_NUMBER.test(raw)) return;
  const text = topLevelNumberText(raw, 'categoryId');
  const value = text === undefined ? undefined : exactInteger(text);
  if (value === undefined || !Number.isInteger(parsed) || value !== BigInt(parsed)) {
    throw new HttpProblem('invalid_body', `categoryId must be an integer from 1 to ${CATEGORY_ID_MAX}, got ${text}`);
  }
}
