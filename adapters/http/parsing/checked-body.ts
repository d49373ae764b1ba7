import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { nameProblem } from '../../../domain/index.ts';
import { NAME_PATTERN } from '../../../contract/schemas.ts';
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
  /** The names a client gives (a string field, or a field of strings), each with its most code points. */
  readonly names: readonly { readonly field: string; readonly maxCodePoints: number }[];
  /**
   * The arrays of strings or numbers whose items must be unique (`uniqueItems`): checked with a set of the
   * values themselves, where the compiled check hashes every item (a claim's 100 leases, on every claim).
   */
  readonly uniques: readonly string[];
  /** Undefined when the values' rules are the use case's, not the schema's (`checkValues: false`). */
  readonly check: TypeCheck<T> | undefined;
}

/**
 * Compiles `schema` for `readBody`. `checkValues: false` checks only the body's form (an object, no
 * unknown field, every required one, integers sent exactly): where the domain checks the values with
 * messages of its own.
 *
 * A string whose pattern is the name rule (`NAME_PATTERN`), alone or as an array's items, is a name: it
 * is checked by the rule a pet's name follows (`nameProblem`), its `maxLength` in code points, where the
 * compiled check would count UTF-16 units (and refuse 64 emoji as 128 characters).
 */
export function bodyShape<T extends TObject>(schema: T, what: string, options: { readonly checkValues?: boolean } = {}): BodyShape<T> {
  const integers = Object.entries(schema.properties).flatMap(([field, property]) => {
    const integer = integerIn(property);
    return integer === undefined ? [] : [{ field, ...(integer.minimum === undefined ? {} : { minimum: integer.minimum as number }), ...(integer.maximum === undefined ? {} : { maximum: integer.maximum as number }) }];
  });
  const checkValues = options.checkValues !== false;
  const names = checkValues ? Object.entries(schema.properties).flatMap(([field, property]) => {
    const name = nameIn(property);
    return name === undefined ? [] : [{ field, maxCodePoints: name.maxLength as number }];
  }) : [];
  const uniques = checkValues ? Object.entries(schema.properties).filter(([, property]) => uniqueScalarsIn(property)).map(([field]) => field) : [];
  return {
    what, fields: Object.keys(schema.properties), required: schema.required ?? [], integers, names, uniques,
    check: checkValues ? TypeCompiler.Compile(names.length === 0 && uniques.length === 0 ? schema : withOwnChecks(schema)) : undefined,
  };
}

/** Whether a property is an array of strings or numbers with `uniqueItems` (`readBody` checks them with a set). */
function uniqueScalarsIn(property: TSchema): boolean {
  const scalar = (schema: TSchema | undefined): boolean =>
    schema !== undefined && (['string', 'integer', 'number'].includes(schema.type as string) || (Array.isArray(schema.anyOf) && (schema.anyOf as TSchema[]).every(scalar))
      || (schema.const !== undefined && ['string', 'number'].includes(typeof schema.const)));
  return property.type === 'array' && property.uniqueItems === true && scalar(property.items as TSchema | undefined);
}

/** A property's integer: itself, or the integer a union of it allows (`start`: `beginning`, `end` or a position). */
function integerIn(property: TSchema): TSchema | undefined {
  if (property.type === 'integer') return property;
  return (property.anyOf as TSchema[] | undefined)?.find((member) => member.type === 'integer');
}

/** A property's name: itself, or its items when it is an array of names. */
function nameIn(property: TSchema): TSchema | undefined {
  const isName = (schema: TSchema | undefined) => schema?.type === 'string' && schema.pattern === NAME_PATTERN;
  if (isName(property)) return property;
  return property.type === 'array' && isName(property.items as TSchema | undefined) ? property.items as TSchema : undefined;
}

/**
 * The schema with each name's length and pattern left to `nameProblem` and the uniqueness of arrays of
 * strings or numbers to `readBody`'s set, everything else as declared.
 */
function withOwnChecks<T extends TObject>(schema: T): T {
  const anyText = ({ minLength: _min, maxLength: _max, pattern: _pattern, ...rest }: TSchema): TSchema => rest as TSchema;
  const properties = Object.fromEntries(Object.entries(schema.properties).map(([field, property]) => {
    const { uniqueItems: _unique, ...repeatable } = property;
    const checked = uniqueScalarsIn(property) ? repeatable as TSchema : property;
    const name = nameIn(checked);
    return [field, name === undefined ? checked : name === checked ? anyText(checked) : { ...checked, items: anyText(name) }];
  }));
  return { ...schema, properties };
}

/**
 * The body checked against its shape, the first problem a 400 `invalid_body` naming the field: not an
 * object, an unknown field, a required one missing, an integer JSON.parse did not read exactly (it
 * rounds 9007199254740993), then the schema's rules, then the names' rule.
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
  for (const field of shape.uniques) {
    const value = body[field];
    // The compiled check's own words for it.
    if (Array.isArray(value) && new Set(value).size !== value.length) throw new HttpProblem('invalid_body', `${field}: Expected array elements to be unique`);
  }
  for (const { field, maxCodePoints } of shape.names) {
    const value = body[field];
    const texts = typeof value === 'string' ? [[field, value]] : Array.isArray(value) ? value.map((text, index) => [`${field}/${index}`, text as string]) : [];
    for (const [name, text] of texts) {
      const problem = nameProblem(name!, text!, maxCodePoints);
      if (problem !== undefined) throw new HttpProblem('invalid_body', problem);
    }
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
