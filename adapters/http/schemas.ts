import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CATEGORY_ID_MAX, PET_STATUSES } from '../../domain/index.ts';
import { ERROR_STATUS } from './error-codes.ts';

export const PetStatusSchema = Type.Union(PET_STATUSES.map((status) => Type.Literal(status)), {
  $id: 'PetStatus',
  description: 'Availability of the animal.',
});

export const NewPetSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: '1 to 255 characters; not only white space; no control characters.' }),
    categoryId: Type.Integer({ minimum: 1, maximum: CATEGORY_ID_MAX, format: 'int64' }),
    status: Type.Optional(PetStatusSchema),
  },
  { $id: 'NewPet', additionalProperties: false },
);

export const PetSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, format: 'int64' }),
    name: Type.String(),
    categoryId: Type.Integer({ format: 'int64' }),
    status: Type.Optional(PetStatusSchema),
  },
  { $id: 'Pet', additionalProperties: false },
);

export const PetsSchema = Type.Array(PetSchema, { $id: 'Pets' });

export const ErrorSchema = Type.Object(
  {
    code: Type.Union(Object.keys(ERROR_STATUS).map((code) => Type.Literal(code))),
    message: Type.String(),
    status: Type.Integer(),
  },
  { $id: 'Error', additionalProperties: false },
);

export const StatusPatchSchema = Type.Object(
  { status: PetStatusSchema },
  { $id: 'StatusPatch', additionalProperties: false, description: 'The only field a PATCH may change.' },
);

export type NewPetBody = Static<typeof NewPetSchema>;

/** Compiled once at load: validation is a plain function call per request. */
export const NewPetCheck = TypeCompiler.Compile(NewPetSchema);
export const StatusPatchCheck = TypeCompiler.Compile(StatusPatchSchema);
