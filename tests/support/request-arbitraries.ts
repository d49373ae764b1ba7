import fc from 'fast-check';

/** A request as bytes on the wire, plus what the reader needs to know to find the end of its answer. */
export interface WireRequest {
  readonly description: string;
  readonly bytes: Buffer;
  /** A HEAD answer has no body whatever its Content-Length says. */
  readonly head: boolean;
  /** A POST whose target is /v1/pets (origin or absolute form): the one request that may create a pet. */
  readonly mayCreate: boolean;
  /** For a PATCH whose target is /v1/pets/{digits}: the pet it names, the one pet whose status it may change. */
  readonly changesPet: number | undefined;
}

const KNOWN_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'QUERY', 'get', 'Post'];
const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const token = (maxLength: number) => fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength });
const unicodeText = (maxLength: number) => fc.oneof(fc.string({ unit: 'grapheme', maxLength }), fc.string({ unit: 'binary', maxLength }));

const method = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'HEAD') }, fc.constantFrom(...KNOWN_METHODS), token(12), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 8 }));

/** Known routes mostly, with random segments, encodings and oddities around them. */
const path = fc.oneof(
  { weight: 5, arbitrary: fc.constant('/v1/pets') },
  { weight: 3, arbitrary: fc.oneof(fc.nat(), fc.bigInt({ min: 0n, max: 10n ** 30n }), token(20), unicodeText(12)).map((id) => `/v1/pets/${encodeURIComponent(String(id))}`) },
  fc.constantFrom('/', '*', '/v1', '/v1/', '/v1/pets/', '/V1/pets', '/v1/pets/1/', '/v1//pets', '/v1/pets/%', '/v1/pets/%zz', '/v1/./pets', '/v1/pets/../pets', '/v1/pets/1%2F2', 'http://evil.example/v1/pets', '/v1/pets#frag'),
  fc.array(fc.oneof(token(10), unicodeText(8).map(encodeURIComponent)), { maxLength: 5 }).map((segments) => `/${segments.join('/')}`),
  fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((text) => `/${text}`),
);

const queryValue = fc.oneof(
  fc.constantFrom('1', '20', '100', '0', '101', '01', '+5', '1e1', '0x10', '1.5', '', '-1', '99999999999999999999', 'available', 'pending', 'sold', 'Available', 'lost', '%00', '%'),
  unicodeText(10).map(encodeURIComponent),
  token(10),
);
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  fc.array(fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constantFrom('limit', 'status') }, token(8)), queryValue), { maxLength: 4 })
    .map((pairs) => `?${pairs.map(([key, value]) => `${key}=${value}`).join('&')}`),
  fc.string({ unit: 'binary-ascii', maxLength: 20 }).map((text) => `?${text}`),
);

/** The text of a JSON number, including the ones JSON.parse would round or overflow. */
const numberText = fc.oneof(
  fc.integer({ min: -5, max: 100 }).map(String),
  fc.constantFrom('9007199254740991', '9007199254740992', '9007199254740993', '9007199254740990.6', '1e3', '1.0', '1E400', '-0', '0.1e1', '1e-7', '123456789012345678901234567890', '1.000000000000000000001'),
  fc.double().filter(Number.isFinite).map(String),
  fc.bigInt().map(String),
);
const jsonText = (maxDepth: number) => fc.jsonValue({ maxDepth }).map((value) => JSON.stringify(value));
const memberValue = fc.oneof(
  { weight: 3, arbitrary: unicodeText(20).map((text) => JSON.stringify(text)) },
  { weight: 3, arbitrary: numberText },
  fc.constantFrom('"available"', '"pending"', '"sold"', '"Sold"', 'null', 'true', '[]', '{}', '"\\u0000"', '"\\ud800"', '" "'),
  jsonText(2),
);
const memberKey = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('name', 'categoryId', 'status') },
  fc.constantFrom('id', '__proto__', 'constructor', 'prototype', 'categoryID', 'Name', ''),
  unicodeText(8),
);
/** An object written member by member, so that duplicate keys and `__proto__` reach the wire as text. */
const objectText = fc.array(fc.tuple(memberKey, memberValue), { maxLength: 6 })
  .map((members) => `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`);
const validPetText = fc.record({
  name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  categoryId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  status: fc.constantFrom('available', 'pending', 'sold'),
}, { requiredKeys: ['name', 'categoryId'] }).map((pet) => JSON.stringify(pet));

const bodyText: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: objectText.map((text) => Buffer.from(text)) },
  { weight: 3, arbitrary: validPetText.map((text) => Buffer.from(text)) },
  { weight: 2, arbitrary: jsonText(4).map((text) => Buffer.from(text)) },
  fc.integer({ min: 1, max: 30_000 }).map((depth) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`)),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => Buffer.from(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)),
  fc.integer({ min: 1_000, max: 80_000 }).map((length) => Buffer.from(JSON.stringify({ name: 'n'.repeat(length), categoryId: 1 }))),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.uint8Array({ maxLength: 20 }).map((bytes) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('","categoryId":1}')])),
  validPetText.map((text) => Buffer.from(text.slice(0, Math.max(1, text.length - 3)))),
  fc.constant(Buffer.alloc(0)),
);

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  fc.constantFrom('application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json; charset=latin1', 'application/json;charset="utf-8"', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/merge-patch+json', 'application/json; q', '*/*', 'application/', ''),
  token(20),
);

export interface RequestParts {
  readonly validKey: string;
  /** Pet ids that exist when the cases start: status changes mostly aim at these. */
  readonly existingPets: { readonly min: number; readonly max: number };
}

/** Header lines beyond the ones that frame the request: names are tokens, values visible text. */
const extraHeaders = fc.array(
  fc.tuple(
    fc.oneof(token(16), fc.constantFrom('X-Request-Id', 'Accept', 'Accept-Encoding', 'Expect', 'Upgrade', 'Connection', 'Cookie', 'Origin', 'Range', 'If-Match', 'Forwarded', 'X-Forwarded-For', 'Host')),
    fc.oneof(fc.string({ unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~'), maxLength: 40 }), fc.constantFrom('100-continue', 'close', 'keep-alive', 'websocket', 'gzip', '*', '')),
  ),
  { maxLength: 4 },
);

function authorization(validKey: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(`Bearer ${validKey}`) },
    fc.constantFrom(`bearer ${validKey}`, `Bearer  ${validKey}`, 'Bearer', 'Basic dXNlcjpwYXNz', `Bearer ${validKey}x`, ''),
    token(30).map((text) => `Bearer ${text}`),
    fc.constant(undefined),
  );
}

/** The parts of a request a caller may generate its own way; the rest are random. */
interface PartArbitraries {
  readonly method?: fc.Arbitrary<string>;
  readonly path?: fc.Arbitrary<string>;
  readonly query?: fc.Arbitrary<string>;
  readonly authorization?: fc.Arbitrary<string | undefined>;
  readonly contentType?: fc.Arbitrary<string | null>;
  readonly body?: fc.Arbitrary<Buffer | null>;
  /** Header lines that come before the random extra ones. */
  readonly headers?: fc.Arbitrary<Array<[string, string]>>;
}

/** The pet a PATCH may change: its target must be /v1/pets/{digits} (origin or absolute form). */
function petChangedBy(verb: string, target: string): number | undefined {
  if (verb !== 'PATCH') return undefined;
  const segment = /^\/v1\/pets\/([^/]+)$/.exec(target.replace(/^https?:\/\/[^/]*/, '').split(/[?#]/)[0]!)?.[1];
  let decoded: string | undefined;
  try {
    decoded = segment === undefined ? undefined : decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return decoded !== undefined && /^[0-9]+$/.test(decoded) ? Number(decoded) : undefined;
}

/** A well-framed HTTP/1.1 request with random content in every part not generated by `parts`. */
function framedRequest({ validKey }: RequestParts, parts: PartArbitraries = {}): fc.Arbitrary<WireRequest> {
  return fc.record({
    method: parts.method ?? method,
    path: parts.path ?? path,
    query: parts.query ?? query,
    authorization: parts.authorization ?? authorization(validKey),
    contentType: parts.contentType ?? fc.option(contentType, { freq: 5 }),
    body: parts.body ?? fc.option(bodyText, { freq: 6 }),
    chunked: fc.boolean(),
    given: parts.headers ?? fc.constant([]),
    extra: extraHeaders,
  }).map(({ method: verb, path: target, query: search, authorization, contentType: type, body, chunked, given, extra }) => {
    const headers: Array<[string, string]> = [['Host', 'fuzz.test']];
    if (authorization !== undefined) headers.push(['Authorization', authorization]);
    if (type !== null) headers.push(['Content-Type', type]);
    headers.push(...given, ...extra.filter(([name]) => !/^(connection|content-length|transfer-encoding)$/i.test(name)));
    headers.push(['Connection', 'close']);
    let payload: Buffer = Buffer.alloc(0);
    if (body !== null) {
      if (chunked) {
        headers.push(['Transfer-Encoding', 'chunked']);
        payload = body.length === 0 ? Buffer.from('0\r\n\r\n') : Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      } else {
        headers.push(['Content-Length', String(body.length)]);
        payload = body;
      }
    }
    const head = Buffer.from(`${verb} ${target}${search} HTTP/1.1\r\n${headers.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`, 'latin1');
    const summary = `${verb} ${target}${search} [${headers.map(([name, value]) => `${name}: ${value.slice(0, 40)}`).join('; ')}] body ${body === null ? 'none' : JSON.stringify(body.subarray(0, 120).toString('latin1'))}${body && body.length > 120 ? `… (${body.length} bytes)` : ''}`;
    return {
      description: summary,
      bytes: Buffer.concat([head, payload]),
      head: verb === 'HEAD',
      mayCreate: verb === 'POST' && target.replace(/^https?:\/\/[^/]*/, '').split(/[?#]/)[0] === '/v1/pets',
      changesPet: petChangedBy(verb, target),
    };
  });
}

/** Bytes that are not HTTP, or HTTP broken in one place. */
const brokenRequest: fc.Arbitrary<WireRequest> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 200 }).map((text) => Buffer.from(`${text}\r\n\r\n`, 'latin1')),
  fc.tuple(token(8), fc.string({ unit: 'binary-ascii', maxLength: 20 }), fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.1 ', 'http/1.1', 'HTTP/1', ''))
    .map(([verb, target, version]) => Buffer.from(`${verb} ${target} ${version}\r\nHost: fuzz.test\r\nConnection: close\r\n\r\n`, 'latin1')),
  fc.tuple(fc.string({ unit: 'binary-ascii', maxLength: 20 }), fc.string({ unit: 'binary-ascii', maxLength: 40 }))
    .map(([name, value]) => Buffer.from(`GET /v1/pets HTTP/1.1\r\nHost: fuzz.test\r\n${name}: ${value}\r\nConnection: close\r\n\r\n`, 'latin1')),
).map((bytes) => ({ description: `raw ${JSON.stringify(bytes.subarray(0, 160).toString('latin1'))}`, bytes, head: false, mayCreate: false, changesPet: undefined }));

/** Status change bodies: mostly `{"status": …}` with a valid or nearly valid value, then anything. */
const statusPatchBody: fc.Arbitrary<Buffer | null> = fc.oneof(
  // More back-and-forth moves than sales: a sold pet refuses every change after.
  { weight: 6, arbitrary: fc.constantFrom('available', 'available', 'pending', 'pending', 'sold').map((status) => Buffer.from(JSON.stringify({ status }))) },
  { weight: 3, arbitrary: memberValue.map((value) => Buffer.from(`{"status":${value}}`)) },
  { weight: 2, arbitrary: objectText.map((text) => Buffer.from(text)) },
  fc.constantFrom('{"status":"sold","name":"Rex"}', '{"status":"available","status":"sold"}', '{"__proto__":{"status":"sold"}}', '{}', '[]', 'null', '"sold"', '{"status":"sold"').map((text) => Buffer.from(text)),
  bodyText,
  fc.constant(null),
);

/** If-Match: none mostly, versions a pet may be at, and every form the header's grammar allows or breaks. */
const ifMatchHeader: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 8 }).map((version) => `"${version}"`) },
  fc.constantFrom('*', 'W/"1"', '"1", "2"', '"2",W/"1"', '"0"', '"01"', '1', '"abc"', '', '"', '"1",', ' "2" ', '"99999999999999999"', '**', '"1" "2"'),
  fc.string({ unit: fc.constantFrom(...'"W/,* 0123456789abc'), maxLength: 16 }),
).map((value): Array<[string, string]> => (value === undefined ? [] : [['If-Match', value]]));

/** PATCH /v1/pets/{petId} on pets that exist and pets that do not, with random bodies and If-Match. */
function statusChange(parts: RequestParts): fc.Arbitrary<WireRequest> {
  const { min, max } = parts.existingPets;
  return framedRequest(parts, {
    method: fc.constant('PATCH'),
    path: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min, max }).map(String) },
      { weight: 2, arbitrary: fc.integer({ min: max + 1, max: Number.MAX_SAFE_INTEGER }).map(String) },
      fc.constantFrom('0', `0${min}`, '9007199254740992', '-1', 'abc', '1.0', `%3${min % 10}`),
    ).map((id) => `/v1/pets/${id}`),
    query: fc.oneof({ weight: 5, arbitrary: fc.constant('') }, query),
    authorization: fc.oneof({ weight: 8, arbitrary: fc.constant(`Bearer ${parts.validKey}`) }, authorization(parts.validKey)),
    contentType: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('application/json', 'application/merge-patch+json') },
      fc.option(contentType, { freq: 5 }),
    ),
    body: statusPatchBody,
    headers: ifMatchHeader,
  });
}

/**
 * Any request a client could send: mostly well framed with random content, many of them creates that
 * get past the key and the media type so that their bodies reach validation, status changes on pets
 * that exist and pets that do not, some broken on the wire.
 */
export function wireRequest(parts: RequestParts): fc.Arbitrary<WireRequest> {
  const create = framedRequest(parts, {
    method: fc.constant('POST'),
    path: fc.constant('/v1/pets'),
    authorization: fc.constant(`Bearer ${parts.validKey}`),
    contentType: fc.constant('application/json'),
    body: fc.option(bodyText, { freq: 20 }),
  });
  return fc.oneof(
    { weight: 4, arbitrary: framedRequest(parts) },
    { weight: 3, arbitrary: create },
    { weight: 2, arbitrary: statusChange(parts) },
    { weight: 1, arbitrary: brokenRequest },
  );
}
