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
  let after: number | undefined;
  if (afterText !== undefined) {
    if (!/^(0|[1-9][0-9]{0,15})$/.test(afterText) || !Number.isSafeInteger(Number(afterText))) {
      throw new HttpProblem('invalid_query', `after must be a pet id in plain digits (0 to 2^53-1), got ${JSON.stringify(afterText)}`);
    }
    after = Number(afterText);
  }
  let limit = DEFAULT_LIMIT;
  if (limitText !== undefined) {
    if (!PLAIN_DECIMAL.test(limitText) || limitText.length > 3 || Number(limitText) > MAX_LIMIT) {
      throw new HttpProblem('invalid_query', `limit must be a whole number from 1 to ${MAX_LIMIT} written in plain digits, got ${JSON.stringify(limitText)}`);
    }
    limit = Number(limitText);
  }
  const continued = after === undefined ? { limit } : { limit, after };
  if (statusText === undefined) return continued;
  if (!isPetStatus(statusText)) {
    throw new HttpProblem('invalid_query', `status must be one of ${PET_STATUSES.join(', ')}, got ${JSON.stringify(statusText)}`);
  }
  return { ...continued, status: statusText };
}

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new HttpProblem('invalid_query', `${name} may be given once, got it ${values.length} times`);
  return values[0];
}
