import { isDecimalDigits, parseDecimalInteger } from '../../../contract/decimal-integer.ts';
import { HttpProblem } from '../pipeline/errors.ts';

/**
 * A path's id (`petId`, `orderId`): anything but decimal digits is a malformed path (400). Digits that
 * cannot name one (0, a leading zero, past 2^53-1) are well-formed but match nothing: `undefined`, answered as 404.
 */
export function parsePetId(text: string, name = 'petId'): number | undefined {
  if (!isDecimalDigits(text)) throw new HttpProblem('invalid_path', `${name} must be decimal digits, got ${JSON.stringify(text)}`);
  return parseDecimalInteger(text, 1);
}
