/**
 * JSON.parse turns 9007199254740993 into 9007199254740992 and 1.0000000000000001 into 1 without a word.
 * To refuse such numbers rather than store a different one, we read the member's source text.
 */

const STRING_TOKEN = /"(?:[^"\\]|\\.)*"/y;
const NUMBER_TOKEN = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WHITE_SPACE = /[\x20\t\n\r]*/y;

/**
 * The source text of the number given for `key` in a top-level JSON object (the last one, as JSON.parse
 * keeps the last of duplicate keys), or undefined when that member is absent or not a number.
 * Expects text that JSON.parse has already accepted.
 */
export function topLevelNumberText(json: string, key: string): string | undefined {
  let depth = 0;
  let found: string | undefined;
  let index = 0;
  while (index < json.length) {
    const char = json[index]!;
    if (char === '"') {
      STRING_TOKEN.lastIndex = index;
      const token = STRING_TOKEN.exec(json)![0];
      index += token.length;
      if (depth !== 1) continue;
      WHITE_SPACE.lastIndex = index;
      const afterKey = index + WHITE_SPACE.exec(json)![0].length;
      if (json[afterKey] !== ':') continue;
      if (JSON.parse(token) !== key) continue;
      WHITE_SPACE.lastIndex = afterKey + 1;
      const valueStart = afterKey + 1 + WHITE_SPACE.exec(json)![0].length;
      NUMBER_TOKEN.lastIndex = valueStart;
      found = NUMBER_TOKEN.exec(json)?.[0];
      index = valueStart;
      continue;
    }
    if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') depth--;
    index++;
  }
  return found;
}

/** The exact integer a JSON number literal denotes, or undefined when it has a fractional part. */
export function exactInteger(numberText: string): bigint | undefined {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(numberText);
  if (!match) return undefined;
  const [, sign, whole, fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText) - fraction.length;
  // Bound the work: no integer we accept needs more than a few hundred digits of exponent.
  if (Math.abs(exponent) > 400) return exponent > 0 && /^0*$/.test(whole! + fraction) ? 0n : undefined;
  let digits = BigInt(whole! + fraction);
  if (exponent >= 0) digits *= 10n ** BigInt(exponent);
  else {
    const divisor = 10n ** BigInt(-exponent);
    if (digits % divisor !== 0n) return undefined;
    digits /= divisor;
  }
  return sign === '-' ? -digits : digits;
}
