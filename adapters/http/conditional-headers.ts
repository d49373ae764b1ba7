import { parseDecimalInteger } from '../../contract/decimal-integer.ts';
import { HttpProblem } from './errors.ts';

/** A strong entity tag for a pet at a stream version. Strong, because If-Match compares strongly (RFC 9110 §13.1.1). */
export function etagFor(version: number): string {
  return `"${version}"`;
}

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/**
 * If-Match as the versions it names: '*', a list of versions, or undefined when absent.
 * Weak tags and tags that are not ours never match, so they name no version; a malformed header is 400.
 */
export function parseIfMatch(header: string | undefined): readonly number[] | '*' | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (trimmed === '*') return '*';
  const versions: number[] = [];
  for (const part of trimmed.split(',')) {
    const tag = ENTITY_TAG.exec(part.trim());
    if (!tag) throw new HttpProblem('invalid_header', `If-Match must be "*" or a list of entity tags such as "3", got ${JSON.stringify(header)}`);
    const [, weak, opaque] = tag;
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
