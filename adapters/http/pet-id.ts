import { HttpProblem } from './errors.ts';

const DIGITS = /^[0-9]+$/;
const CANONICAL_ID = /^[1-9][0-9]{0,15}$/;

/**
 * A path's petId: anything but decimal digits is a malformed path (400). Digits that cannot name a pet
 * (0, a leading zero, past 2^53-1) are well-formed but match nothing: `undefined`, answered as 404.
 */
export function parsePetId(text: string): number | undefined {
  if (!DIGITS.test(text)) throw new HttpProblem('invalid_path', `petId must be decimal digits, got ${JSON.stringify(text)}`);
  if (!CANONICAL_ID.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
}
