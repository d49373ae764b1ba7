import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/**
 * One `describe` per row of docs/decisions.md ("Decisions where the interface is silent") that applies to
 * GET /v1/pets, POST /v1/pets and GET /v1/pets/{petId}. The rows about PATCH, idempotency, rate limits,
 * the documents and the probes have files of their own.
 */

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

type RequestInitWithKey = RequestInit & { key?: string | null };
/** A request the service must refuse, by what is wrong with it. */
type BadRequest = readonly [label: string, send: () => Promise<Response>];

const ERROR_CODES = new Set([
  'unauthorized', 'invalid_query', 'invalid_path', 'invalid_body', 'invalid_header', 'malformed_json',
  'unsupported_media_type', 'payload_too_large', 'headers_too_large', 'request_timeout', 'not_found', 'method_not_allowed', 'illegal_transition',
  'version_mismatch', 'idempotency_key_reused', 'rate_limited', 'unavailable', 'internal',
]);
const MAX_SAFE = Number.MAX_SAFE_INTEGER; // 9007199254740991
const EMOJI = '\u{1F415}'; // 🐕: one code point, two UTF-16 units

let api: TestService;

before(async () => {
  api = await startTestService();
});

after(async () => {
  await api.stop();
});

/** Client input never earns a 5xx: every answer in this file is checked for one as it arrives. */
function assertNoServerError(request: string, response: Response): void {
  assert.ok(Number.isInteger(response.status) && response.status < 500, `${request} answered ${response.status}`);
}

async function send(path: string, init: RequestInitWithKey = {}): Promise<Response> {
  const response = await api.request(path, init);
  assertNoServerError(`${init.method ?? 'GET'} ${path}`, response);
  return response;
}

/** POSTs `text` as it is (no JSON.stringify), so number literals reach the service exactly as written. */
function postText(text: string, contentType = 'application/json', init: RequestInitWithKey = {}): Promise<Response> {
  return send('/v1/pets', { ...init, method: 'POST', headers: { 'content-type': contentType, ...(init.headers as Record<string, string>) }, body: text });
}

function post(body: unknown, init: RequestInitWithKey = {}): Promise<Response> {
  return postText(JSON.stringify(body), 'application/json', init);
}

async function expectCreated(response: Response): Promise<Pet> {
  assert.equal(response.status, 201, `expected 201, got ${response.status}: ${await response.clone().text()}`);
  return (await response.json()) as Pet;
}

/** Reads an Error body (through readError) and checks its code is one of the fixed snake_case set. */
async function readKnownError(response: Response): Promise<{ code: string; message: string; status: number }> {
  const error = await readError(response);
  assert.ok(ERROR_CODES.has(error.code), `unknown code ${error.code}`);
  assert.match(error.code, /^[a-z]+(_[a-z]+)*$/);
  return error;
}

/** Checks an error answer: its HTTP status, the Error shape, a code from the fixed set, and that it is `code`. */
async function expectError(response: Response, status: number, code: string): Promise<{ code: string; message: string; status: number }> {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status}: ${await response.clone().text()}`);
  const error = await readKnownError(response);
  assert.equal(error.code, code, `message: ${error.message}`);
  return error;
}

async function listAll(query = ''): Promise<Pet[]> {
  const response = await send(`/v1/pets?limit=100${query}`);
  assert.equal(response.status, 200);
  const pets = (await response.json()) as Pet[];
  assert.ok(pets.length < 100, 'this file must keep fewer than 100 pets for a listing to be the whole catalogue');
  return pets;
}

/** Raw bytes (for what fetch refuses to send), answered as a Response that readError can check like any other. */
async function sendRaw(bytes: string): Promise<Response> {
  const response = await api.sendRaw(bytes);
  assertNoServerError(`raw ${JSON.stringify(bytes.slice(0, 40))}`, response);
  return response;
}

function rawRequest(method: string, path: string, extraHeaders: readonly string[] = []): string {
  return [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Authorization: Bearer ${TEST_API_KEY}`, 'Connection: close', ...extraHeaders, '', ''].join('\r\n');
}

describe('decision: `status` omitted on create', () => {
  it('answers 201 with a Pet that has no status key', async () => {
    const pet = await expectCreated(await post({ name: 'Statusless', categoryId: 1 }));
    assert.deepEqual(Object.keys(pet), ['id', 'name', 'categoryId']);
  });

  it('does not give the pet a default status when it is fetched', async () => {
    const pet = await expectCreated(await post({ name: 'Statusless fetched', categoryId: 1 }));
    const response = await send(`/v1/pets/${pet.id}`);
    assert.equal(response.status, 200);
    assert.equal(Object.hasOwn((await response.json()) as Pet, 'status'), false);
  });

  it('matches the pet with no status filter', async () => {
    const pet = await expectCreated(await post({ name: 'Statusless filtered', categoryId: 1 }));
    for (const status of ['available', 'pending', 'sold']) {
      const filtered = await listAll(`&status=${status}`);
      assert.equal(filtered.some((candidate) => candidate.id === pet.id), false, `status=${status} lists it`);
    }
  });
});

describe('decision: `id` sent on create', () => {
  it('rejects a body with an id with 400 invalid_body naming id', async () => {
    const error = await expectError(await post({ id: 424242, name: 'Self-numbered', categoryId: 1 }), 400, 'invalid_body');
    assert.match(error.message, /\bid\b/);
  });

  it('rejects an id of null with 400 invalid_body', async () => {
    await expectError(await post({ id: null, name: 'Null id', categoryId: 1 }), 400, 'invalid_body');
  });

  it('does not create a pet under the id that was sent', async () => {
    await post({ id: 424243, name: 'Self-numbered', categoryId: 1 });
    await expectError(await send('/v1/pets/424243'), 404, 'not_found');
  });
});

describe('decision: unknown body fields', () => {
  it('rejects a categoryID typo with 400 invalid_body whose message names categoryID', async () => {
    const error = await expectError(await post({ name: 'Typo', categoryID: 1 }), 400, 'invalid_body');
    assert.match(error.message, /categoryID/);
  });

  it('rejects an extra field beside the valid ones with 400 whose message names it', async () => {
    const error = await expectError(await post({ name: 'Extra', categoryId: 1, colour: 'brown' }), 400, 'invalid_body');
    assert.match(error.message, /colour/);
  });
});

describe('decision: `name` (1 to 255 code points, exact, no white-space-only, no control characters)', () => {
  it('accepts a name of 255 emoji (255 code points, 510 UTF-16 units)', async () => {
    const name = EMOJI.repeat(255);
    const pet = await expectCreated(await post({ name, categoryId: 1 }));
    assert.equal(pet.name, name);
  });

  it('rejects a name of 256 emoji with 400 invalid_body', async () => {
    await expectError(await post({ name: EMOJI.repeat(256), categoryId: 1 }), 400, 'invalid_body');
  });

  it('accepts a name of 255 ASCII characters', async () => {
    const name = 'a'.repeat(255);
    assert.equal((await expectCreated(await post({ name, categoryId: 1 }))).name, name);
  });

  it('rejects a name of 256 ASCII characters with 400 invalid_body', async () => {
    await expectError(await post({ name: 'a'.repeat(256), categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects an empty name with 400 invalid_body', async () => {
    await expectError(await post({ name: '', categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects a name of only white space with 400 invalid_body', async () => {
    await expectError(await post({ name: ' \u00a0\u3000 ', categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects a name holding U+0001 with 400 invalid_body', async () => {
    await expectError(await post({ name: 'Re\u0001x', categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects a name holding U+0000 with 400 invalid_body', async () => {
    await expectError(await post({ name: 'Re\u0000x', categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects a name holding a line feed (U+000A) with 400 invalid_body', async () => {
    await expectError(await post({ name: 'Re\nx', categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects a name holding U+001F with 400 invalid_body', async () => {
    await expectError(await post({ name: 'Re\u001fx', categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects a name holding a lone surrogate with 400 invalid_body', async () => {
    await expectError(await postText('{"name":"Re\\ud800x","categoryId":1}'), 400, 'invalid_body');
  });

  it('rejects a name that is not a string with 400 invalid_body', async () => {
    await expectError(await post({ name: 42, categoryId: 1 }), 400, 'invalid_body');
  });

  it('rejects a body without name with 400 invalid_body naming name', async () => {
    const error = await expectError(await post({ categoryId: 1 }), 400, 'invalid_body');
    assert.match(error.message, /name/);
  });

  for (const [label, name] of [
    ['emoji and a ZWJ sequence', `Rex ${EMOJI} \u{1F468}\u200D\u{1F469}\u200D\u{1F467}`],
    ['right-to-left text', '\u05E8\u05E7\u05E1 \u0627\u0644\u0643\u0644\u0628'],
    ['SQL metacharacters', "Robert'); DROP TABLE pets;--"],
    ['leading and trailing spaces', '  Rex  '],
    ['a decomposed accent (not normalised)', 'Rene\u0301'],
    ['HTML and quotes', '<b>"Rex"</b> & \\ %'],
  ] as const) {
    it(`stores and returns a name with ${label} exactly`, async () => {
      const created = await expectCreated(await post({ name, categoryId: 1 }));
      assert.equal(created.name, name);
      const fetched = await send(`/v1/pets/${created.id}`);
      assert.equal(((await fetched.json()) as Pet).name, name);
    });
  }

  it('keeps the pets table working after a name with SQL metacharacters', async () => {
    await expectCreated(await post({ name: "x'); DROP TABLE pets;--", categoryId: 1 }));
    const pets = await listAll();
    assert.ok(pets.some((pet) => pet.name === "x'); DROP TABLE pets;--"));
  });
});

// The tables of bad input below are also replayed together by the rows on error codes and on 5xx.
const BAD_CATEGORY_IDS = [
  ['0', 0],
  ['-1', -1],
  ['1.5', 1.5],
  ['the string "1"', '1'],
  ['null', null],
  ['true', true],
  ['an object', { id: 1 }],
  ['9007199254740992 (2^53)', 2 ** 53],
] as const;
const ROUNDED_NUMBER_TEXTS = ['9007199254740993', '9007199254740990.6', '1.0000000000000001', '1e400', '0e400', '1e-400', '-0'] as const;

describe('decision: `categoryId` (an integer from 1 to 2^53-1, never rounded)', () => {
  for (const [label, value] of BAD_CATEGORY_IDS) {
    it(`rejects a categoryId of ${label} with 400 invalid_body`, async () => {
      await expectError(await post({ name: 'Category', categoryId: value }), 400, 'invalid_body');
    });
  }

  it('rejects a body without categoryId with 400 invalid_body naming categoryId', async () => {
    const error = await expectError(await post({ name: 'Category' }), 400, 'invalid_body');
    assert.match(error.message, /categoryId/);
  });

  it('accepts a categoryId of 9007199254740991 (2^53-1) and returns it exactly', async () => {
    const pet = await expectCreated(await post({ name: 'Max category', categoryId: MAX_SAFE }));
    assert.equal(pet.categoryId, MAX_SAFE);
  });

  it('accepts a categoryId of 1', async () => {
    assert.equal((await expectCreated(await post({ name: 'Min category', categoryId: 1 }))).categoryId, 1);
  });

  for (const literal of ROUNDED_NUMBER_TEXTS) {
    it(`rejects the raw number text ${literal} (JSON.parse would round it) with 400 invalid_body`, async () => {
      await expectError(await postText(`{"name":"Raw","categoryId":${literal}}`), 400, 'invalid_body');
    });
  }

  it('accepts the raw number text 1e3 as categoryId 1000', async () => {
    const pet = await expectCreated(await postText('{"name":"Exponent","categoryId":1e3}'));
    assert.equal(pet.categoryId, 1000);
  });

  it('accepts the raw number text 1.0 as categoryId 1', async () => {
    const pet = await expectCreated(await postText('{"name":"Point zero","categoryId":1.0}'));
    assert.equal(pet.categoryId, 1);
  });

  it('checks the text of categoryId itself, not of a same-named key nested deeper', async () => {
    const pet = await expectCreated(await postText('{"name":"categoryId","categoryId":7}'));
    assert.equal(pet.categoryId, 7);
  });
});

const BAD_LIMITS = [
  ['0', 'limit=0'],
  ['101', 'limit=101'],
  ['-1', 'limit=-1'],
  ['1000', 'limit=1000'],
  ['01 (leading zero)', 'limit=01'],
  ['+5 (encoded plus sign)', 'limit=%2B5'],
  ['+5 (a plus that decodes to a space)', 'limit=+5'],
  ['1e1', 'limit=1e1'],
  ['0x10', 'limit=0x10'],
  ['1.5', 'limit=1.5'],
  ['" 5" (a space)', 'limit=%205'],
  ['abc', 'limit=abc'],
  ['empty (limit=)', 'limit='],
  ['empty (bare limit)', 'limit'],
  ['repeated (limit=1&limit=2)', 'limit=1&limit=2'],
  ['repeated with equal values (limit=5&limit=5)', 'limit=5&limit=5'],
] as const;
const BAD_STATUSES = [
  ['an unknown status (lost)', 'status=lost'],
  ['a status in the wrong case (Available)', 'status=Available'],
  ['a status in upper case (SOLD)', 'status=SOLD'],
  ['an empty status', 'status='],
  ['a status with a trailing space', 'status=sold%20'],
  ['a repeated status (status=sold&status=pending)', 'status=sold&status=pending'],
  ['a repeated equal status (status=sold&status=sold)', 'status=sold&status=sold'],
] as const;

describe('decision: `limit` and `status` query values checked as text', () => {
  for (const [label, query] of BAD_LIMITS) {
    it(`rejects limit ${label} with 400 invalid_query naming limit`, async () => {
      const error = await expectError(await send(`/v1/pets?${query}`), 400, 'invalid_query');
      assert.match(error.message, /limit/);
    });
  }

  it('accepts limit=100', async () => {
    const response = await send('/v1/pets?limit=100');
    assert.equal(response.status, 200);
    assert.ok(((await response.json()) as Pet[]).length <= 100);
  });

  it('accepts limit=1 and returns one pet', async () => {
    await expectCreated(await post({ name: 'At least one', categoryId: 1 }));
    const response = await send('/v1/pets?limit=1');
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as Pet[]).length, 1);
  });

  for (const [label, query] of BAD_STATUSES) {
    it(`rejects ${label} with 400 invalid_query naming status`, async () => {
      const error = await expectError(await send(`/v1/pets?${query}`), 400, 'invalid_query');
      assert.match(error.message, /status/);
    });
  }
});

describe('decision: unknown query parameters', () => {
  it('ignores an unknown parameter and answers the same listing as without it', async () => {
    const plain = await listAll();
    const response = await send('/v1/pets?limit=100&colour=brown&cursor=abc');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), plain);
  });

  it('treats a differently cased parameter name (LIMIT) as unknown, not as limit', async () => {
    const response = await send('/v1/pets?LIMIT=abc');
    assert.equal(response.status, 200);
  });
});

describe('decision: listing order', () => {
  it('lists pets in ascending id order', async () => {
    const listed = (await listAll()).map((pet) => pet.id);
    assert.deepEqual(listed, [...listed].sort((a, b) => a - b));
  });

  it('answers the same listing twice in a row', async () => {
    assert.deepEqual(await listAll(), await listAll());
  });

  it('answers the same filtered listing twice in a row', async () => {
    await expectCreated(await post({ name: 'Sold one', categoryId: 1, status: 'sold' }));
    assert.deepEqual(await listAll('&status=sold'), await listAll('&status=sold'));
  });
});

const MALFORMED_JSON = [
  ['a truncated object', '{"name":"Rex","categoryId":'],
  ['single-quoted JSON-like text', "{'name':'Rex','categoryId':1}"],
  ['a trailing comma', '{"name":"Rex","categoryId":1,}'],
  ['unquoted keys', '{name:"Rex",categoryId:1}'],
  ['plain words', 'hello'],
  ['two objects', '{"name":"Rex","categoryId":1}{}'],
] as const;
const JSON_NOT_OBJECTS = [
  ['an array', '[{"name":"Rex","categoryId":1}]'],
  ['a number', '42'],
  ['a string', '"Rex"'],
  ['null', 'null'],
  ['true', 'true'],
] as const;

describe('decision: malformed JSON; valid JSON that is not an object', () => {
  for (const [label, text] of MALFORMED_JSON) {
    it(`rejects ${label} with 400 malformed_json`, async () => {
      await expectError(await postText(text), 400, 'malformed_json');
    });
  }

  for (const [label, text] of JSON_NOT_OBJECTS) {
    it(`rejects ${label} (valid JSON, not an object) with 400 invalid_body`, async () => {
      await expectError(await postText(text), 400, 'invalid_body');
    });
  }

  it('rejects an empty body with 400 invalid_body', async () => {
    await expectError(await postText(''), 400, 'invalid_body');
  });
});

const TYPED_BODY = '{"name":"Typed","categoryId":1}';
const UNSUPPORTED_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/merge-patch+json',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'not a media type',
] as const;

describe('decision: body not `application/json`; a charset other than UTF-8', () => {
  for (const contentType of UNSUPPORTED_TYPES) {
    it(`rejects Content-Type ${contentType} with 415 unsupported_media_type`, async () => {
      await expectError(await postText(TYPED_BODY, contentType), 415, 'unsupported_media_type');
    });
  }

  it('rejects a body sent without Content-Type with 415 unsupported_media_type', async () => {
    const response = await send('/v1/pets', { method: 'POST', body: new Blob([TYPED_BODY]) });
    await expectError(response, 415, 'unsupported_media_type');
  });

  for (const contentType of ['application/json; charset=UTF-8', 'application/json; charset=utf-8', 'application/json; charset="utf-8"', 'Application/JSON']) {
    it(`accepts Content-Type ${contentType}`, async () => {
      await expectCreated(await postText(TYPED_BODY, contentType));
    });
  }
});

describe('decision: body over 64 KiB', () => {
  /** A valid NewPet padded with white space to exactly `bytes` bytes. */
  function paddedBody(bytes: number): string {
    const head = '{"name":"Padded","categoryId":1';
    return `${head}${' '.repeat(bytes - head.length - 1)}}`;
  }

  it('accepts a body of exactly 64 KiB (65536 bytes)', async () => {
    await expectCreated(await postText(paddedBody(65_536)));
  });

  it('rejects a body of 65537 bytes with 413 payload_too_large', async () => {
    await expectError(await postText(paddedBody(65_537)), 413, 'payload_too_large');
  });

  it('rejects a body of 1 MiB with 413 payload_too_large', async () => {
    await expectError(await postText(paddedBody(1024 * 1024)), 413, 'payload_too_large');
  });

  it('rejects a chunked body over 64 KiB (no Content-Length) with 413 payload_too_large', async () => {
    const body = paddedBody(70_000);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });
    const response = await send('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    await expectError(response, 413, 'payload_too_large');
  });
});

const UNKNOWN_PATHS = ['/v1/pets/', '/V1/pets', '/v1/Pets', '/v1/pets/1/x', '/pets', '/V1/', '/v1//', '/index.html', '/v2/pets', '/v1/pets//1'] as const;
const OTHER_METHODS_ON_PETS = ['DELETE', 'PUT', 'PATCH', 'PURGE', 'OPTIONS'] as const;
const OTHER_METHODS_ON_A_PET = ['DELETE', 'PUT', 'POST'] as const;

/** `{"name":"Ab<bytes>cd","categoryId":1}` as bytes; the inserted bytes start at offset 11. */
function bodyWithNameBytes(bytes: readonly number[]): Uint8Array<ArrayBuffer> {
  return new Uint8Array([...Buffer.from('{"name":"Ab'), ...bytes, ...Buffer.from('cd","categoryId":1}')]);
}
const NAME_BYTES_OFFSET = 11;

const ILL_FORMED_UTF8: ReadonlyArray<[label: string, bytes: readonly number[]]> = [
  ['an overlong "/" (C0 AF)', [0xc0, 0xaf]],
  ['an overlong NUL in three bytes (E0 80 80)', [0xe0, 0x80, 0x80]],
  ['a lone continuation byte (80)', [0x80]],
  ['a sequence cut short (E2 82, no third byte)', [0xe2, 0x82]],
  ['a four-byte sequence cut short (F0 9F 90)', [0xf0, 0x9f, 0x90]],
  ['a surrogate encoded in UTF-8 (ED A0 80, U+D800)', [0xed, 0xa0, 0x80]],
  ['a code point past U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80]],
  ['a byte UTF-8 never uses (FF)', [0xff]],
];

describe('decision: body bytes that are not UTF-8', () => {
  const postBytes = (body: Uint8Array<ArrayBuffer>) => send('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  for (const [label, bytes] of ILL_FORMED_UTF8) {
    it(`refuses ${label} in a name with 400 malformed_json naming the byte offset, and stores nothing`, async () => {
      const before = await listAll();
      const error = await expectError(await postBytes(bodyWithNameBytes(bytes)), 400, 'malformed_json');
      assert.match(error.message, new RegExp(`not valid UTF-8.* byte offset ${NAME_BYTES_OFFSET}\\b`));
      assert.deepEqual(await listAll(), before);
    });
  }

  it('names the offset of the first bad byte after valid multi-byte characters', async () => {
    // "é" (2 bytes) and "🐕" (4 bytes) before the bad byte move it 6 bytes on.
    const error = await expectError(await postBytes(bodyWithNameBytes([...Buffer.from(`é${EMOJI}`), 0x80])), 400, 'malformed_json');
    assert.match(error.message, new RegExp(`byte offset ${NAME_BYTES_OFFSET + 6}\\b`));
  });

  it('refuses ill-formed UTF-8 in a PATCH body too', async () => {
    const pet = await expectCreated(await post({ name: 'Patched', categoryId: 1 }));
    const body = new Uint8Array([...Buffer.from('{"status":"sold","x":"'), 0xc0, 0xaf, ...Buffer.from('"}')]);
    const error = await expectError(
      await send(`/v1/pets/${pet.id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body }),
      400,
      'malformed_json',
    );
    assert.match(error.message, /byte offset 22\b/);
  });

  for (const name of [`Rex ${EMOJI}`, '小狗', 'Ünïcödé ñame', '\u{10FFFF}\u{E000}', 'U+FFFD as sent: \uFFFD']) {
    it(`stores a well-formed multi-byte name exactly (${JSON.stringify(name)})`, async () => {
      const created = await expectCreated(await postBytes(new TextEncoder().encode(JSON.stringify({ name, categoryId: 1 }))));
      assert.equal(created.name, name);
      const read = await send(`/v1/pets/${created.id}`);
      assert.equal(((await read.json()) as Pet).name, name);
    });
  }

  it('drops a leading byte order mark, as before', async () => {
    const body = new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from('{"name":"Bom","categoryId":1}')]);
    assert.equal((await expectCreated(await postBytes(body))).name, 'Bom');
  });

  it('refuses a query or path whose percent-encoding is not UTF-8 (every query value and petId is ASCII)', async () => {
    await expectError(await send('/v1/pets?status=%C0%AF'), 400, 'invalid_query');
    await expectError(await send('/v1/pets?after=%ED%A0%80'), 400, 'invalid_query');
    await expectError(await send('/v1/pets/%C0%80'), 400, 'invalid_path');
  });
});

describe('decision: unknown path', () => {
  for (const path of UNKNOWN_PATHS) {
    it(`answers ${path} with 404 not_found`, async () => {
      await expectError(await send(path), 404, 'not_found');
    });
  }

  it('answers POST /v1/pets/ (trailing slash) with 404 not_found', async () => {
    await expectError(await send('/v1/pets/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Slash","categoryId":1}' }), 404, 'not_found');
  });

  for (const method of OTHER_METHODS_ON_PETS) {
    it(`answers ${method} /v1/pets with 405 method_not_allowed and Allow: GET, HEAD, POST`, async () => {
      const response = await send('/v1/pets', { method });
      assert.deepEqual(allowed(response.headers.get('allow')), ['GET', 'HEAD', 'POST']);
      await expectError(response, 405, 'method_not_allowed');
    });
  }

  for (const method of OTHER_METHODS_ON_A_PET) {
    it(`answers ${method} /v1/pets/{petId} with 405 method_not_allowed and Allow: GET, HEAD, PATCH`, async () => {
      const response = await send('/v1/pets/1', { method, headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.deepEqual(allowed(response.headers.get('allow')), ['GET', 'HEAD', 'PATCH']);
      await expectError(response, 405, 'method_not_allowed');
    });
  }

  it('answers TRACE /v1/pets (which fetch refuses to send) with 405 and Allow', async () => {
    const response = await sendRaw(rawRequest('TRACE', '/v1/pets'));
    assert.deepEqual(allowed(response.headers.get('allow')), ['GET', 'HEAD', 'POST']);
    await expectError(response, 405, 'method_not_allowed');
  });

  it('answers MKCOL /v1/pets (a method @koa/router does not know) with 405 and Allow', async () => {
    const response = await sendRaw(rawRequest('MKCOL', '/v1/pets'));
    assert.deepEqual(allowed(response.headers.get('allow')), ['GET', 'HEAD', 'POST']);
    await expectError(response, 405, 'method_not_allowed');
  });

  it('answers a request line Node\'s parser rejects (GARBAGE) with 400 and a JSON Error body', async () => {
    const response = await sendRaw('GARBAGE\r\n\r\n');
    await expectError(response, 400, 'invalid_header');
  });

  it('answers a header line without a colon with 400 and a JSON Error body', async () => {
    const response = await sendRaw('GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColonHere\r\n\r\n');
    await expectError(response, 400, 'invalid_header');
  });

  it('answers an HTTP/1.1 request without a Host header with 400 and a JSON Error body', async () => {
    // Node's server refuses it (requireHostHeader) with an empty 400 before Koa or the clientError handler run.
    const response = await sendRaw('GET /v1/pets HTTP/1.1\r\nConnection: close\r\n\r\n');
    await expectError(response, 400, 'invalid_header');
  });

  it('answers headers over Node\'s size limit with a JSON Error body whose code is in the fixed set', async () => {
    const response = await sendRaw(rawRequest('GET', '/v1/pets', [`X-Padding: ${'a'.repeat(20_000)}`]));
    assert.ok(response.status >= 400 && response.status < 500, `got ${response.status}`);
    const error = await readError(response);
    assert.ok(ERROR_CODES.has(error.code), `code ${error.code} is not in the documented fixed set`);
  });

  it('answers a method name Node\'s parser does not know (FOO) on a known path with 405 and Allow', async () => {
    // llhttp refuses unknown method tokens before Koa runs; the clientError handler still answers 405.
    const response = await sendRaw(rawRequest('FOO', '/v1/pets'));
    assert.deepEqual(allowed(response.headers.get('allow')), ['GET', 'HEAD', 'POST']);
    await expectError(response, 405, 'method_not_allowed');
  });

  it('answers a method name Node\'s parser does not know on an unknown path with 404', async () => {
    await expectError(await sendRaw(rawRequest('FOO', '/v1/nothing')), 404, 'not_found');
  });

  it('answers a request with both Content-Length and Transfer-Encoding with 400 and a JSON Error body', async () => {
    const response = await sendRaw(rawRequest('POST', '/v1/pets', ['Content-Type: application/json', 'Content-Length: 2', 'Transfer-Encoding: chunked']) + '0\r\n\r\n');
    await expectError(response, 400, 'invalid_header');
  });
});

function allowed(header: string | null): string[] {
  return (header ?? '').split(',').map((method) => method.trim()).filter(Boolean).sort();
}

describe('decision: who needs a key (every pet operation; not the documents or the probes)', () => {
  it('answers GET /v1/pets without a key with 401 unauthorized', async () => {
    await expectError(await send('/v1/pets', { key: null }), 401, 'unauthorized');
  });

  it('answers POST /v1/pets without a key with 401 unauthorized', async () => {
    await expectError(await post({ name: 'Keyless', categoryId: 1 }, { key: null }), 401, 'unauthorized');
  });

  it('answers GET /v1/pets/{petId} without a key with 401 unauthorized', async () => {
    const pet = await expectCreated(await post({ name: 'Guarded', categoryId: 1 }));
    await expectError(await send(`/v1/pets/${pet.id}`, { key: null }), 401, 'unauthorized');
  });

  it('creates nothing for a valid body sent without a key', async () => {
    const before = await listAll();
    await post({ name: 'Keyless', categoryId: 1 }, { key: null });
    assert.deepEqual(await listAll(), before);
  });

  for (const path of ['/v1/openapi.json', '/v1/docs', '/livez', '/healthz', '/readyz', '/metrics']) {
    it(`answers GET ${path} without a key with 200`, async () => {
      const response = await send(path, { key: null });
      assert.equal(response.status, 200);
    });
  }
});

describe('decision: order of checks on a pet operation (the key first)', () => {
  const wrongKey = 'wrong-key-0123456789abcdef';

  it('answers a bad key with a malformed body with 401', async () => {
    await expectError(await postText('{"name":', 'application/json', { key: wrongKey }), 401, 'unauthorized');
  });

  it('answers a bad key with an invalid body with 401', async () => {
    await expectError(await post({ id: 1, categoryID: 'x' }, { key: wrongKey }), 401, 'unauthorized');
  });

  it('answers a bad key with a text/plain body with 401', async () => {
    await expectError(await postText('hello', 'text/plain', { key: wrongKey }), 401, 'unauthorized');
  });

  it('answers a bad key with a body over 64 KiB with 401', async () => {
    await expectError(await postText(`{"name":"${'a'.repeat(70_000)}","categoryId":1}`, 'application/json', { key: wrongKey }), 401, 'unauthorized');
  });

  it('answers a bad key with a bad query with 401', async () => {
    await expectError(await send('/v1/pets?limit=0&status=lost', { key: wrongKey }), 401, 'unauthorized');
  });

  it('answers a missing key with a bad query with 401', async () => {
    await expectError(await send('/v1/pets?limit=abc', { key: null }), 401, 'unauthorized');
  });

  it('answers a bad key on GET /v1/pets/abc with 401', async () => {
    await expectError(await send('/v1/pets/abc', { key: wrongKey }), 401, 'unauthorized');
  });

  it('answers a bad key on GET /v1/pets/{petId} for an unknown pet with 401, not 404', async () => {
    await expectError(await send('/v1/pets/987654321', { key: wrongKey }), 401, 'unauthorized');
  });
});

const BAD_PET_IDS = [
  ['abc', 'abc'],
  ['-1', '-1'],
  ['+1', '+1'],
  ['0x1', '0x1'],
  ['1.5', '1.5'],
  ['1e3', '1e3'],
  ['" 1" (percent-encoded space)', '%201'],
  ['"1 " (percent-encoded trailing space)', '1%20'],
  ['a full-width digit', '%EF%BC%91'],
] as const;
const PET_IDS_NAMING_NO_PET = ['0', '007', '9007199254740992', '99999999999999999999', '9007199254740991'] as const;

describe('decision: `petId` (decimal digits only; digits naming no pet are 404)', () => {
  for (const [label, segment] of BAD_PET_IDS) {
    it(`answers petId ${label} with 400 invalid_path`, async () => {
      await expectError(await send(`/v1/pets/${segment}`), 400, 'invalid_path');
    });
  }

  for (const segment of PET_IDS_NAMING_NO_PET) {
    it(`answers petId ${segment} with 404 not_found`, async () => {
      await expectError(await send(`/v1/pets/${segment}`), 404, 'not_found');
    });
  }

  for (const segment of ['.', '..']) {
    it(`answers the dot segment ${segment} as a petId, sent as it is (fetch would resolve it), with 400 invalid_path`, async () => {
      const host = new URL(api.baseUrl).host;
      const response = await api.sendRaw(`GET /v1/pets/${segment} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nConnection: close\r\n\r\n`);
      await expectError(response, 400, 'invalid_path');
    });
  }

  it('answers petId with a leading zero before an existing id with 404, not the pet', async () => {
    const pet = await expectCreated(await post({ name: 'Zero padded', categoryId: 1 }));
    await expectError(await send(`/v1/pets/0${pet.id}`), 404, 'not_found');
  });
});

describe('decision: `Bearer` (scheme case-insensitive, key exact)', () => {
  for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
    it(`accepts the scheme written ${scheme}`, async () => {
      const response = await send('/v1/pets', { headers: { authorization: `${scheme} ${TEST_API_KEY}` } });
      assert.equal(response.status, 200);
    });
  }

  it('rejects the key in another case with 401', async () => {
    await expectError(await send('/v1/pets', { key: TEST_API_KEY.toUpperCase() }), 401, 'unauthorized');
  });

  it('rejects the key with one character more with 401', async () => {
    await expectError(await send('/v1/pets', { key: `${TEST_API_KEY}0` }), 401, 'unauthorized');
  });

  it('rejects a prefix of the key with 401', async () => {
    await expectError(await send('/v1/pets', { key: TEST_API_KEY.slice(0, -1) }), 401, 'unauthorized');
  });

  it('rejects the key without a scheme with 401', async () => {
    await expectError(await send('/v1/pets', { headers: { authorization: TEST_API_KEY } }), 401, 'unauthorized');
  });
});

describe('decision: missing key / wrong key (WWW-Authenticate per RFC 6750)', () => {
  it('answers a missing key with 401 and WWW-Authenticate: Bearer exactly', async () => {
    const response = await send('/v1/pets', { key: null });
    assert.equal(response.headers.get('www-authenticate'), 'Bearer');
    await expectError(response, 401, 'unauthorized');
  });

  it('answers a wrong key with 401 and WWW-Authenticate carrying error="invalid_token"', async () => {
    const response = await send('/v1/pets', { key: 'wrong-key-0123456789abcdef' });
    const challenge = response.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer\b/);
    assert.match(challenge, /error="invalid_token"/);
    await expectError(response, 401, 'unauthorized');
  });

  it('answers Basic credentials with 401 and a Bearer challenge', async () => {
    const response = await send('/v1/pets', { headers: { authorization: `Basic ${Buffer.from(`user:${TEST_API_KEY}`).toString('base64')}` } });
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/);
    await expectError(response, 401, 'unauthorized');
  });

  it('answers Basic credentials with WWW-Authenticate: Bearer and no error code (RFC 6750 section 3.1)', async () => {
    // "attempted using an unsupported authentication method": the resource server SHOULD NOT include an error code.
    const response = await send('/v1/pets', { headers: { authorization: `Basic ${Buffer.from(`user:${TEST_API_KEY}`).toString('base64')}` } });
    assert.equal(response.headers.get('www-authenticate'), 'Bearer');
    await expectError(response, 401, 'unauthorized');
  });

  it('answers "Bearer" with no key after it with 401', async () => {
    await expectError(await send('/v1/pets', { headers: { authorization: 'Bearer' } }), 401, 'unauthorized');
  });

  for (const [label, second] of [['the same key', `Bearer ${TEST_API_KEY}`], ['a wrong key', 'Bearer wrong-key-0123456789abcdef']] as const) {
    it(`answers two Authorization fields (a good key, then ${label}) with 400 invalid_header, on a cached listing too`, async () => {
      assert.equal((await send('/v1/pets?limit=3')).status, 200, 'the listing is cached');
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await sendRaw(rawRequest('GET', '/v1/pets?limit=3', [`Authorization: ${second}`]));
        const error = await expectError(response, 400, 'invalid_header');
        assert.match(error.message, /Authorization/);
      }
    });
  }

  it('never echoes the key that was sent in the error message', async () => {
    const sent = 'secret-looking-key-0123456789';
    const error = await expectError(await send('/v1/pets', { key: sent }), 401, 'unauthorized');
    assert.equal(error.message.includes(sent), false);
  });
});

describe('decision: deprecated `GET /pets/{petId}` (Deprecation, Sunset, Link on every answer)', () => {
  function assertDeprecationHeaders(response: Response): void {
    assert.equal(response.headers.get('deprecation'), '@1795219200');
    assert.equal(response.headers.get('sunset'), 'Thu, 05 Dec 2030 00:00:00 GMT');
    assert.equal(response.headers.get('link'), `<${api.baseUrl}/pets>; rel="successor-version"`);
  }

  it('marks a 200 answer', async () => {
    const pet = await expectCreated(await post({ name: 'Deprecated', categoryId: 1 }));
    const response = await send(`/v1/pets/${pet.id}`);
    assert.equal(response.status, 200);
    assertDeprecationHeaders(response);
  });

  it('marks a 401 answer', async () => {
    const response = await send('/v1/pets/1', { key: null });
    assertDeprecationHeaders(response);
    await expectError(response, 401, 'unauthorized');
  });

  it('marks a 404 answer', async () => {
    const response = await send('/v1/pets/987654321');
    assertDeprecationHeaders(response);
    await expectError(response, 404, 'not_found');
  });

  it('marks a 400 invalid_path answer', async () => {
    const response = await send('/v1/pets/abc');
    assertDeprecationHeaders(response);
    await expectError(response, 400, 'invalid_path');
  });

  it('marks the 400 given when Node\'s parser refuses a header of the request (a control byte)', async () => {
    const response = await api.sendRaw(`GET /v1/pets/1 HTTP/1.1\r\nHost: ${new URL(api.baseUrl).host}\r\nX-Bad: a\u0001b\r\n\r\n`);
    assertDeprecationHeaders(response);
    await expectError(response, 400, 'invalid_header');
  });

  it('does not mark the parser\'s 400 for a PATCH of the same path', async () => {
    const response = await api.sendRaw(`PATCH /v1/pets/1 HTTP/1.1\r\nHost: ${new URL(api.baseUrl).host}\r\nX-Bad: a\u0001b\r\n\r\n`);
    assert.equal(response.headers.get('deprecation'), null);
    await expectError(response, 400, 'invalid_header');
  });

  it('marks a HEAD answer', async () => {
    const response = await send('/v1/pets/987654321', { method: 'HEAD' });
    assertDeprecationHeaders(response);
  });

  it('does not mark GET /v1/pets', async () => {
    const response = await send('/v1/pets');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('deprecation'), null);
    assert.equal(response.headers.get('sunset'), null);
  });

  it('does not mark a 401 on GET /v1/pets', async () => {
    const response = await send('/v1/pets', { key: null });
    assert.equal(response.headers.get('deprecation'), null);
    await expectError(response, 401, 'unauthorized');
  });

  it('does not mark POST /v1/pets', async () => {
    const response = await post({ name: 'Current', categoryId: 1 });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('deprecation'), null);
    assert.equal(response.headers.get('sunset'), null);
  });

  it('does not mark a 400 on POST /v1/pets', async () => {
    const response = await post({ name: '', categoryId: 1 });
    assert.equal(response.headers.get('deprecation'), null);
    await expectError(response, 400, 'invalid_body');
  });
});

describe('decision: a `__proto__` key in a body', () => {
  it('rejects a body with a __proto__ key with 400 invalid_body', async () => {
    await expectError(await postText('{"name":"Proto","categoryId":1,"__proto__":{"polluted":true}}'), 400, 'invalid_body');
  });

  it('leaves Object.prototype unpolluted', async () => {
    await postText('{"name":"Proto","categoryId":1,"__proto__":{"polluted":true}}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  });

  it('rejects a constructor.prototype key with 400 invalid_body', async () => {
    await expectError(await postText('{"name":"Proto","categoryId":1,"constructor":{"prototype":{"polluted":true}}}'), 400, 'invalid_body');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

/** POSTs the service must refuse, one for each way a create can be wrong. */
const REJECTED_POSTS: readonly BadRequest[] = [
  ['an id', () => post({ id: 1, name: 'Rejected', categoryId: 1 })],
  ['a categoryID typo', () => post({ name: 'Rejected', categoryID: 1 })],
  ['an empty name', () => post({ name: '', categoryId: 1 })],
  ['a name of 256 code points', () => post({ name: EMOJI.repeat(256), categoryId: 1 })],
  ['categoryId 0', () => post({ name: 'Rejected', categoryId: 0 })],
  ['an unknown status', () => post({ name: 'Rejected', categoryId: 1, status: 'lost' })],
  ['a categoryId JSON.parse would round', () => postText('{"name":"Rejected","categoryId":9007199254740993}')],
  ['truncated JSON', () => postText('{"name":')],
  ['an array', () => postText('[]')],
  ['text/plain', () => postText('{"name":"Rejected","categoryId":1}', 'text/plain')],
  ['charset iso-8859-1', () => postText('{"name":"Rejected","categoryId":1}', 'application/json; charset=iso-8859-1')],
  ['a body over 64 KiB', () => postText(`{"name":"${'a'.repeat(70_000)}","categoryId":1}`)],
  ['a wrong key', () => post({ name: 'Rejected', categoryId: 1 }, { key: 'wrong-key-0123456789abcdef' })],
];

describe('decision: rejected POSTs create nothing', () => {
  it('leaves the listing unchanged after a series of rejected POSTs', async () => {
    const before = await listAll();
    for (const [, reject] of REJECTED_POSTS) await reject();
    assert.deepEqual(await listAll(), before);
  });

  it('rejects a status outside PetStatus with 400 invalid_body', async () => {
    await expectError(await post({ name: 'Lost', categoryId: 1, status: 'lost' }), 400, 'invalid_body');
  });

  it('rejects a status in the wrong case on create with 400 invalid_body', async () => {
    await expectError(await post({ name: 'Lost', categoryId: 1, status: 'Available' }), 400, 'invalid_body');
  });

  it('rejects a status of null on create with 400 invalid_body', async () => {
    await expectError(await post({ name: 'Lost', categoryId: 1, status: null }), 400, 'invalid_body');
  });
});

/** Inputs aimed at the parsers, the decoders and the number conversions. */
const HOSTILE_REQUESTS = [
  ['a categoryId with a huge exponent', '/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Huge","categoryId":1e999999999}' }],
  ['a categoryId of 60000 digits', '/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"name":"Long","categoryId":${'9'.repeat(60_000)}}` }],
  ['deeply nested JSON', '/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"name":"Deep","categoryId":1,"x":${'['.repeat(30_000)}${']'.repeat(30_000)}}` }],
  ['bytes that are not UTF-8', '/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }],
  ['a gzip Content-Encoding over plain text', '/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: '{"name":"Zip","categoryId":1}' }],
  ['an unknown Content-Encoding', '/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'foo' }, body: '{"name":"Zip","categoryId":1}' }],
  ['a malformed percent-encoding in petId', '/v1/pets/%E0%A4%A', {}],
  ['a lone percent sign in petId', '/v1/pets/%', {}],
  ['a malformed percent-encoding in the query', '/v1/pets?limit=%ZZ&status=%', {}],
  ['a very long limit', `/v1/pets?limit=${'9'.repeat(6_000)}`, {}],
  ['an over-long Authorization header', '/v1/pets', { headers: { authorization: `Bearer ${'a'.repeat(6_000)}` } }],
  ['an Authorization header with odd characters', '/v1/pets', { headers: { authorization: 'Bearer ä"\\ÿ' } }],
] as const;

/**
 * Every bad request in this file's tables, sent afresh: the rows on error codes and on 5xx send them
 * themselves rather than count on what the rows before them sent.
 */
function badRequests(): BadRequest[] {
  const get = (label: string, path: string): BadRequest => [label, () => send(path)];
  return [
    ...BAD_CATEGORY_IDS.map(([label, value]): BadRequest => [`categoryId ${label}`, () => post({ name: 'Category', categoryId: value })]),
    ...ROUNDED_NUMBER_TEXTS.map((text): BadRequest => [`categoryId ${text}`, () => postText(`{"name":"Raw","categoryId":${text}}`)]),
    ...[...BAD_LIMITS, ...BAD_STATUSES].map(([label, query]) => get(`query ${label}`, `/v1/pets?${query}`)),
    ...[...MALFORMED_JSON, ...JSON_NOT_OBJECTS].map(([label, text]): BadRequest => [`body ${label}`, () => postText(text)]),
    ...UNSUPPORTED_TYPES.map((type): BadRequest => [`Content-Type ${type}`, () => postText(TYPED_BODY, type)]),
    ...UNKNOWN_PATHS.map((path) => get(`path ${path}`, path)),
    ...OTHER_METHODS_ON_PETS.map((method): BadRequest => [`${method} /v1/pets`, () => send('/v1/pets', { method })]),
    ...OTHER_METHODS_ON_A_PET.map((method): BadRequest => [
      `${method} /v1/pets/1`,
      () => send('/v1/pets/1', { method, headers: { 'content-type': 'application/json' }, body: '{}' }),
    ]),
    ...[...BAD_PET_IDS.map(([, segment]) => segment), ...PET_IDS_NAMING_NO_PET].map((segment) => get(`petId ${segment}`, `/v1/pets/${segment}`)),
    ...REJECTED_POSTS.map(([label, reject]): BadRequest => [`POST with ${label}`, reject]),
    ...HOSTILE_REQUESTS.map(([label, path, init]): BadRequest => [label, () => send(path, init as RequestInitWithKey)]),
  ];
}

describe('decision: error `code` values', () => {
  it('answers every bad request of this file with a code from the fixed snake_case set, at least 8 codes in all', async () => {
    const codesSeen = new Set<string>();
    for (const [label, request] of badRequests()) {
      const response = await request();
      assert.ok(response.status >= 400, `${label} answered ${response.status}`);
      codesSeen.add((await readKnownError(response)).code);
    }
    assert.ok(codesSeen.size >= 8, `only ${codesSeen.size} codes seen`);
  });
});

describe('decision: 5xx never for client input', () => {
  for (const [label, path, init] of HOSTILE_REQUESTS) {
    it(`answers ${label} with a 4xx`, async () => {
      const response = await send(path, init as RequestInitWithKey);
      assert.ok(response.status >= 400 && response.status < 500, `got ${response.status}: ${await response.clone().text()}`);
      await readError(response);
    });
  }

  it('answers none of the bad requests of this file with a 5xx', async () => {
    const requests = badRequests();
    assert.ok(requests.length > 100, `only ${requests.length} requests were sent`);
    for (const [label, request] of requests) {
      const { status } = await request();
      assert.ok(Number.isInteger(status) && status < 500, `${label} answered ${status}`);
    }
  });
});
