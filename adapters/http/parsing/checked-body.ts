import type { Static, TObject } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { HttpProblem } from '../pipeline/errors.ts';
import { exactInteger, topLevelNumberText } from './exact-json-integer.ts';
import { readJsonObject } from './json-body.ts';
import type { JsonBody } from './json-body.ts';

/** A JSON body's shape, compiled once from its TypeBox schema: the one check every route's body goes through. */
export interface BodyShape<T extends TObject> {
  /** What the body is, for messages ("a NewPet"). */
  readonly what: string;
  readonly fields: readonly string[];
  readonly required: readonly string[];
  /** The integer fields, each with the range its message names. */
  readonly integers: readonly { readonly field: string; readonly minimum?: number; readonly maximum?: number }[];
  /** Undefined when the values' rules are the use case's, not the schema's (`checkValues: false`). */
  readonly check: TypeCheck<T> | undefined;
}

/**
 * Compiles `schema` for `readBody`. `checkValues: false` checks only the body's form (an object, no
 * unknown field, every required one, integers sent exactly): where the domain checks the values with
 * messages of its own.
 */
export function bodyShape<T extends TObject>(schema: T, what: string, options: { readonly checkValues?: boolean } = {}): BodyShape<T> {
  const integers = Object.entries(schema.properties)
    .filter(([, property]) => property.type === 'integer')
    .map(([field, property]) => ({ field, ...(property.minimum === undefined ? {} : { minimum: property.minimum as number }), ...(property.maximum === undefined ? {} : { maximum: property.maximum as number }) }));
  return {
    what, fields: Object.keys(schema.properties), required: schema.required ?? [], integers,
    check: options.checkValues === false ? undefined : TypeCompiler.Compile(schema),
  };
}

/**
 * The body checked against its shape, the first problem a 400 `invalid_body` naming the field: not an
 * object, an unknown field, a required one missing, an integer JSON.parse did not read exactly (it
 * rounds 9007199254740993), then the schema's rules.
 */
export function readBody<T extends TObject>(sent: JsonBody, shape: BodyShape<T>): Static<T> {
  const { body, raw } = readJsonObject(sent, shape.what, shape.fields);
  for (const field of shape.required) {
    if (!Object.hasOwn(body, field)) throw new HttpProblem('invalid_body', `${field} is required`);
  }
  for (const integer of shape.integers) {
    const value = body[integer.field];
    if (typeof value === 'number') assertSentExactly(raw, integer, value);
  }
  if (shape.check && !shape.check.Check(body)) {
    const first = shape.check.Errors(body).First()!;
    throw new HttpProblem('invalid_body', `${first.path.slice(1) || 'body'}: ${first.message}`);
  }
  return body as Static<T>;
}

// A number with a fraction or an exponent has a digit before its "." or "e"; one of 16 digits or more may not fit a double.
const MAYBE_INEXACT_NUMBER = /[0-9][.eE]|[0-9]{16}/;

/** JSON.parse may round a number (9007199254740993, 1.0000000000000001): refuse one it did not read exactly. */
function assertSentExactly(raw: string, { field, minimum, maximum }: BodyShape<TObject>['integers'][number], parsed: number): void {
  // Without such a number anywhere in the text, every number in it is an integer of at most 15 digits, read exactly.
  if (!MAYBE_INEXACT_NUMBER.test(raw)) return;
  const text = topLevelNumberText(raw, field);
  const value = text === undefined ? undefined : exactInteger(text);
  if (value === undefined || !Number.isInteger(parsed) || value !== BigInt(parsed)) {
    const range = minimum !== undefined && maximum !== undefined ? ` from ${minimum} to ${maximum}` : minimum !== undefined ? ` of at least ${minimum}` : '';
    throw new HttpProblem('invalid_body', `${field} must be an integer${range}, got ${text}`);
  }
}
