import type { ListPetsInput } from '../../../application/index.ts';
import { parseDecimalInteger } from '../../../contract/decimal-integer.ts';
import { HttpProblem } from '../pipeline/errors.ts';

/** The pet listing's query: `limit`, `after` and `status` (see `parsePageQuery`). */
export function parseListQuery(querystring: string): ListPetsInput {
  return parsePageQuery(querystring, { texts: ['status'] });
}

/** A page query as read: `limit` and `after`, and the listing's own filters, each as its type. */
export type PageQuery<Text extends string, Integer extends string> =
  { limit?: number; after?: number } & { [K in Text]?: string } & { [K in Integer]?: number };

/**
 * Every listing's query, read once: `limit`, `after` and the listing's filters (`texts` as written,
 * `integers` in plain digits) from the raw query string, each given at most once, checking only that
 * each is written as its type; the listing's use case checks their values (`checkedPage`). Unknown
 * parameters are ignored.
 */
export function parsePageQuery<Text extends string = never, Integer extends string = never>(
  querystring: string, filters: { readonly texts?: readonly Text[]; readonly integers?: readonly Integer[] } = {},
): PageQuery<Text, Integer> {
  const params = readQuery(querystring);
  const query: Record<string, string | number> = {};
  for (const name of ['limit', 'after', ...(filters.integers ?? [])]) {
    const value = plainInteger(name, single(params, name));
    if (value !== undefined) query[name] = value;
  }
  for (const name of filters.texts ?? []) {
    const value = single(params, name);
    if (value !== undefined) query[name] = value;
  }
  return query as PageQuery<Text, Integer>;
}

/** The next page's address (RFC 8288 `rel="next"`): the same filters and limit, continuing after `after`. */
export function nextPageLink(base: string, path: string, filters: Readonly<Record<string, string | number | undefined>>, limit: number, after: number): string {
  const params = new URLSearchParams({ limit: String(limit) });
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) params.set(name, String(value));
  params.set('after', String(after));
  return `<${base}${path}?${params}>; rel="next"`;
}

/** A query value written as a whole number in plain digits (0 to 2^53-1); whether it is in range is the use case's to say. */
export function plainInteger(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = parseDecimalInteger(text);
  if (value === undefined) throw new HttpProblem('invalid_query', `${name} must be a whole number written in plain digits, got ${JSON.stringify(text)}`);
  return value;
}

/**
 * The query's parameters. A percent-encoded value that is not UTF-8 (`status=%ff`) is refused naming
 * its bytes as written: decoding would put U+FFFD in its place, and an error would echo a character
 * the client never sent.
 */
export function readQuery(querystring: string): URLSearchParams {
  const params = new URLSearchParams(querystring);
  if (!querystring.includes('%')) return params;
  for (const part of querystring.split('&')) {
    const [name = '', value = ''] = part.split('=', 2);
    const decodedName = decodedOrUndefined(name);
    if (decodedName === undefined) throw notUtf8('a parameter name', name);
    if (decodedOrUndefined(value) === undefined) throw notUtf8(decodedName, value);
  }
  return params;
}

/** The text a query component decodes to, or undefined where its percent-encoded bytes are not UTF-8. */
function decodedOrUndefined(component: string): string | undefined {
  const decoded = new URLSearchParams(`v=${component}`).get('v')!;
  if (!decoded.includes('\uFFFD')) return decoded;
  // U+FFFD the client did send, encoded, is text like any other.
  try {
    decodeURIComponent(component.replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
    return decoded;
  } catch {
    return undefined;
  }
}

function notUtf8(name: string, written: string): HttpProblem {
  const shown = written.length > 60 ? `${written.slice(0, 60)}…` : written;
  return new HttpProblem('invalid_query', `${name} must be UTF-8 text; its percent-encoded bytes ${shown} are not`);
}

/** The one value of a query parameter given at most once. */
export function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new HttpProblem('invalid_query', `${name} may be given once, got it ${values.length} times`);
  return values[0];
}
