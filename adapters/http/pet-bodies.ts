import type { Context } from 'koa';
import type { TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { CATEGORY_ID_MAX } from '../../domain/index.ts';
import type { NewPet } from '../../application/index.ts';
import type { PetStatus } from '../../domain/index.ts';
import { HttpProblem } from './errors.ts';
import { exactInteger, topLevelNumberText } from './exact-json-integer.ts';
import { readJsonObject } from './json-body.ts';
import { NewPetCheck, NewPetSchema, StatusPatchCheck, StatusPatchSchema } from '../../contract/schemas.ts';

/** POST /pets: a NewPet, with a 400 that names the field for anything else. */
export function readNewPet(ctx: Context): NewPet {
  const { body, raw } = readJsonObject(ctx, 'a NewPet', Object.keys(NewPetSchema.properties));
  if (typeof body.categoryId === 'number') assertExactCategoryId(raw);
  return checked(NewPetCheck, body, ['name', 'categoryId']);
}

/** PATCH /pets/{petId}: `{ "status": … }` and nothing else. */
export function readStatusPatch(ctx: Context): { status: PetStatus } {
  const { body } = readJsonObject(ctx, 'a status change', Object.keys(StatusPatchSchema.properties));
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

function assertExactCategoryId(raw: string): void {
  const text = topLevelNumberText(raw, 'categoryId');
  const value = text === undefined ? undefined : exactInteger(text);
  if (value === undefined || value < 1n || value > BigInt(CATEGORY_ID_MAX)) {
    throw new HttpProblem('invalid_body', `categoryId must be an integer from 1 to ${CATEGORY_ID_MAX}, got ${text}`);
  }
}
