import { isPetStatus, PET_STATUSES } from '../../domain/index.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../application/index.ts';
import type { ListPetsInput } from '../../application/index.ts';
import { HttpProblem } from './errors.ts';

// Plain decimal digits, no sign and no leading zero: anything else (1e1, 0x10, 1.5, +5) is refused,
// because a lenient converter would quietly turn it into some other number.
const PLAIN_DECIMAL = /^[1-9][0-9]*$/;

/** Reads `limit`, `status` and `after` from the raw query string, checking the text before any conversion. */
export function parseListQuery(querystring: string): ListPetsInput {
  const params = new URLSearchParams(querystring);
  const limitText = single(params, 'limit');
  const statusText = single(params, 'status');
  const afterText = single(params, 'after');
  const after = afterText === undefined ? undefined : parseAfter(afterText, 'a pet id');
  const limit = limitText === undefined ? DEFAULT_LIMIT : parseLimit(limitText, MAX_LIMIT);
  const continued = after === undefined ? { limit } : { limit, after };
  if (statusText === undefined) return continued;
  if (!isPetStatus(statusText)) {
    throw new HttpProblem('invalid_query', `status must be one of ${PET_STATUSES.join(', ')}, got ${JSON.stringify(statusText)}`);
  }
  return { ...continued, status: statusText };
}

/** An `after` query value: plain digits from 0 to 2^53-1, naming `what` (a pet id, a log position). */
export function parseAfter(text: string, what: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new HttpProblem('invalid_query', `after must be ${what} in plain digits (0 to 2^53-1), got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** A `limit` query value: plain digits from 1 to `max`. */
export function parseLimit(text: string, max: number): number {
  if (!PLAIN_DECIMAL.test(text) || text.length > String(max).length || Number(text) > max) {
    throw new HttpProblem('invalid_query', `limit must be a whole number from 1 to ${max} written in plain digits, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** The one value of a query parameter given at most once. */
export function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new HttpProblem('invalid_query', `${name} may be given once, got it ${values.length} times`);
  return values[0];
}
