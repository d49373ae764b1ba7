/**
 * How the interface writes a whole number as text (query values, path ids, headers, the CLI's
 * arguments, and the OpenAPI patterns that describe them): plain decimal digits, no sign, no leading
 * zero, at most 2^53-1. Anything else (1e1, 0x10, 1.5, +5, 007) is refused rather than read as some
 * other number. The patterns cannot say "at most 2^53-1" exactly; `parseDecimalInteger` does.
 */
const POSITIVE_DIGITS = '[1-9][0-9]{0,15}';

/** A whole number from 0, as a pattern (OpenAPI, JSON Schema). */
export const DECIMAL_INTEGER_PATTERN = `^(0|${POSITIVE_DIGITS})$`;
/** A whole number from 1 (ids, log positions), as a pattern. */
export const POSITIVE_INTEGER_PATTERN = `^${POSITIVE_DIGITS}$`;
/** The same inside a longer pattern, without its anchors. */
export const POSITIVE_INTEGER_DIGITS = POSITIVE_DIGITS;

const DECIMAL_INTEGER = new RegExp(DECIMAL_INTEGER_PATTERN);
const DIGITS = /^[0-9]+$/;

/** The number `text` writes by the rule above, when it lies in `[min, max]`; undefined otherwise. */
export function parseDecimalInteger(text: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (!DECIMAL_INTEGER.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
}

/** Whether `text` is decimal digits at all, leading zeros included: well-formed, though it may name no number by the rule. */
export function isDecimalDigits(text: string): boolean {
  return DIGITS.test(text);
}
