import type { ListPetsInput } from '../../application/index.ts';
import { parseDecimalInteger } from '../../contract/decimal-integer.ts';
import { HttpProblem } from './errors.ts';

/**
 * Turns `limit`, `status` and `after` from the raw query string into the listing's input, checking only
 * that each is written as its type; the listing use case checks their values.
 */
export function parseListQuery(querystring: string): ListPetsInput {
  const params = new URLSearchParams(querystring);
  const limit = plainInteger('limit', single(params, 'limit'));
  const status = single(params, 'status');
  const after = plainInteger('after', single(params, 'after'));
  return { ...(limit === undefined ? {} : { limit }), ...(status === undefined ? {} : { status }), ...(after === undefined ? {} : { after }) };
}

/** A query value written as a whole number in plain digits (0 to 2^53-1); whether it is in range is the use case's to say. */
export function plainInteger(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = parseDecimalInteger(text);
  if (value === undefined) throw new HttpProblem('invalid_query', `${name} must be a whole number written in plain digits, got ${JSON.stringify(text)}`);
  return value;
}

/** The one value of a query parameter given at most once. */
export function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new HttpProblem('invalid_query', `${name} may be given once, got it ${values.length} times`);
  return values[0];
}
