import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { CATEGORY_ID_MAX, NAME_MAX_CODE_POINTS, PET_STATUSES } from '../domain/index.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../application/index.ts';
import { ERROR_STATUS } from './error-codes.ts';

export const PetStatusSchema = Type.Union(PET_STATUSES.map((status) => Type.Literal(status)), {
  $id: 'PetStatus',
  description: 'Availability of the animal.',
});

// The domain's name rules as a pattern a validator can run: no control character anywhere, and at least
// one character that is neither white space nor a control character. No look-ahead, so that generators
// that turn patterns into validators (or test data) can use it.
export const NAME_PATTERN = '^[^\\u0000-\\u001F]*[^\\s\\u0000-\\u001F][^\\u0000-\\u001F]*$';

export const NewPetSchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: NAME_MAX_CODE_POINTS,
      pattern: NAME_PATTERN,
      description:
        `1 to ${NAME_MAX_CODE_POINTS} Unicode code points (as JSON Schema counts maxLength; up to ${2 * NAME_MAX_CODE_POINTS} UTF-16 units), ` +
        'stored and returned exactly; not only white space; no control characters U+0000 to U+001F.',
    }),
    categoryId: Type.Integer({ minimum: 1, maximum: CATEGORY_ID_MAX, format: 'int64' }),
    status: Type.Optional(PetStatusSchema),
  },
  { $id: 'NewPet', additionalProperties: false },
);

export const PetSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, format: 'int64' }),
    name: Type.String(),
    categoryId: Type.Integer({ minimum: 1, maximum: CATEGORY_ID_MAX, format: 'int64' }),
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

// Parameters. Their text is checked by list-query.ts and pet-id.ts (digits only, before any conversion);
// these schemas describe the same rules in the OpenAPI document, from the same constants.
export const LimitSchema = Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size: plain decimal digits.' });
export const AfterSchema = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  format: 'int64',
  description: 'Continue after the pet with this id (exclusive), in id order: plain decimal digits.',
});
export const PetIdSchema = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  format: 'int64',
  description: 'Decimal digits only (anything else, a sign included, is 400); digits that can name no pet (0, a leading zero, past 2^53-1) are 404.',
});

export type NewPetBody = Static<typeof NewPetSchema>;
