import { parseDecimalInteger } from '../../../contract/decimal-integer.ts';
import { ENTITY_TAG, IF_MATCH_PATTERN } from '../../../contract/entity-tags.ts';
import { HttpProblem } from '../pipeline/errors.ts';

/** A strong entity tag for a pet at a stream version. Strong, because If-Match compares strongly (RFC 9110 §13.1.1). */
export function etagFor(version: number): string {
  return `"${version}"`;
}

const IF_MATCH = new RegExp(IF_MATCH_PATTERN);

/**
 * If-Match as the versions it names: '*', a list of versions, or undefined when absent.
 * Weak tags and tags that are not ours never match, so they name no version; a malformed header is 400.
 */
export function parseIfMatch(header: string | undefined): readonly number[] | '*' | undefined {
  if (header === undefined) return undefined;
  if (!IF_MATCH.test(header)) {
    throw new HttpProblem('invalid_header', `If-Match must be "*" or a list of entity tags such as "3", got ${JSON.stringify(header)}`);
  }
  if (header.trim() === '*') return '*';
  const versions: number[] = [];
  for (const [, weak, opaque] of header.matchAll(ENTITY_TAG)) {
    const version = weak ? undefined : parseDecimalInteger(opaque!, 1);
    if (version !== undefined) versions.push(version);
  }
  return versions;
}

// 1 to 255 visible ASCII characters.
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(header)) {
    throw new HttpProblem('invalid_header', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return header;
}
