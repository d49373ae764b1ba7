import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pet } from '../../domain/index.ts';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import { snapshotStore } from '../support/store-snapshot.ts';

/** Prototype pollution and injection: hostile input changes nothing it should not, and text is kept exactly. */

let api: TestService;

before(async () => {
  api = await startTestService();
});
after(async () => {
  await api.stop();
});

async function postRaw(body: string): Promise<Response> {
  return api.request('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

/** Runs `attempt`, which must be refused with 400 `code`, and checks the store did not move. */
async function assertRefusedUnchanged(attempt: () => Promise<Response>, code: string): Promise<string> {
  const before = await snapshotStore((await api.database()).db);
  const response = await attempt();
  assert.equal(response.status, 400);
  const error = await readError(response);
  assert.equal(error.code, code);
  assert.deepEqual(await snapshotStore((await api.database()).db), before);
  return error.message;
}

describe('prototype pollution', () => {
  const pollutingBodies = [
    '{"name":"Rex","categoryId":1,"__proto__":{"polluted":"yes"}}',
    '{"__proto__":{"polluted":"yes"},"name":"Rex","categoryId":1}',
    '{"name":"Rex","categoryId":1,"status":{"__proto__":{"polluted":"yes"}}}',
    '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"polluted":"yes"}}}',
    '{"name":"Rex","categoryId":1,"prototype":{"polluted":"yes"}}',
    '{"name":{"__proto__":{"toString":"yes"}},"categoryId":1}',
    '[{"__proto__":{"polluted":"yes"}}]',
    // The key written with JSON escapes is the same key once parsed.
    '{"name":"Rex","categoryId":1,"\\u005f_proto__":{"polluted":"yes"}}',
    '{"name":"Rex","categoryId":1,"status":{"__pro\\u0074o__":{"polluted":"yes"}}}',
  ];
  for (const body of pollutingBodies) {
    it(`refuses ${body} with 400, and nothing global or stored changes`, async () => {
      const before = Object.getOwnPropertyNames(Object.prototype).sort();
      const message = await assertRefusedUnchanged(() => postRaw(body), 'invalid_body');
      if (/(_|\\u005f)(_|\\u005f)pro(t|\\u0074)o__/.test(body)) assert.match(message, /must not contain a "__proto__" key/);
      assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), before);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(typeof ({} as { toString: unknown }).toString, 'function');
    });
  }
});

describe('names are stored and returned exactly, or refused by the stated rule', () => {
  const kept: Array<[string, string]> = [
    ['SQL metacharacters', "Robert'); DROP TABLE pets;-- \" ` \\ % _ *"],
    ['a SQL comment and a UNION', "x' UNION SELECT key_hash FROM api_keys --"],
    ['emoji with joiners and modifiers', '🐕‍🦺 👩🏽‍🚒 🏳️‍🌈'],
    ['right-to-left text', 'كلب שלום'],
    ['bidi override characters', 'a\u202eb\u202dc\u200fd'],
    ['combining marks (not normalised)', 'e\u0301 and \u00e9'],
    ['zero-width and BOM characters', 'a\u200bb\ufeffc'],
    ['DEL and C1 controls, outside U+0000–U+001F', 'a\u007fb\u0085c\u009fd'],
    ['HTML and template syntax', '<script>alert(1)</script>{{7*7}}${7*7}'],
    ['255 emoji (255 code points)', '🐈'.repeat(255)],
    ['a name of digits that looks like a number', '0012'],
  ];
  for (const [what, name] of kept) {
    it(`keeps ${what}`, async () => {
      const response = await api.createPet({ name, categoryId: 7, status: 'pending' });
      assert.equal(response.status, 201);
      const created = (await response.json()) as Pet;
      assert.equal(created.name, name);
      const fetched = (await (await api.request(`/v1/pets/${created.id}`)).json()) as Pet;
      assert.deepEqual(fetched, created);
      const listed = (await (await api.request('/v1/pets?status=pending&limit=100')).json()) as Pet[];
      assert.deepEqual(listed.find((pet) => pet.id === created.id), created);
    });
  }

  const refused: Array<[string, string, RegExp]> = [
    ['NUL', '"Rex\\u0000"', /control characters/],
    ['a line feed', '"Rex\\nRex"', /control characters/],
    ['a tab', '"\\tRex"', /control characters/],
    ['U+001F', '"Rex\\u001f"', /control characters/],
    ['a lone surrogate', '"Rex\\ud800"', /well-formed/],
    ['256 code points', JSON.stringify('🐈'.repeat(256)), /1 to 255/],
    ['only white space', '" \\u3000 "', /white space/],
  ];
  for (const [what, nameJson, rule] of refused) {
    it(`refuses a name with ${what} (400 invalid_body) and stores nothing`, async () => {
      const message = await assertRefusedUnchanged(() => postRaw(`{"name":${nameJson},"categoryId":1}`), 'invalid_body');
      assert.match(message, rule);
    });
  }
});

describe('bytes that are not UTF-8, such as the overlong forms filters miss', () => {
  /** `{"name":"Rex<bytes>","categoryId":1}`: the bytes start at offset 12. */
  const withBytes = (bytes: readonly number[]) =>
    api.request('/v1/pets', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array([...Buffer.from('{"name":"Rex'), ...bytes, ...Buffer.from('","categoryId":1}')]),
    });
  const overlong: Array<[string, number[]]> = [
    ['an overlong quote (C0 A2)', [0xc0, 0xa2]],
    ['an overlong NUL (C0 80)', [0xc0, 0x80]],
    ['an overlong "<" in three bytes (E0 80 BC)', [0xe0, 0x80, 0xbc]],
    ['an overlong "\\" in four bytes (F0 80 81 9C)', [0xf0, 0x80, 0x81, 0x9c]],
  ];
  for (const [what, bytes] of overlong) {
    it(`refuses ${what} with 400 malformed_json at byte offset 12, and stores nothing`, async () => {
      const message = await assertRefusedUnchanged(() => withBytes(bytes), 'malformed_json');
      assert.match(message, /not valid UTF-8.* byte offset 12\b/);
    });
  }
});

describe('injection through the query, the path and the key', () => {
  for (const query of ["status=available' OR '1'='1", 'status=available;DROP TABLE pets', 'limit=1;DROP TABLE pets', 'limit=1 OR 1=1', 'status=sold&status=sold', 'status=%00']) {
    it(`refuses ?${query} with 400 invalid_query`, async () => {
      await assertRefusedUnchanged(() => api.request(`/v1/pets?${query}`), 'invalid_query');
    });
  }

  const notUtf8 = [['/v1/pets?status=%ff', 'status', '%ff'], ['/v1/pets?limit=1%C3', 'limit', '1%C3'], ['/v1/events?type=a%80b', 'type', 'a%80b'], ['/v1/pets?%fe=1', 'a parameter name', '%fe']] as const;
  for (const [path, name, bytes] of notUtf8) {
    it(`refuses ${path}, whose bytes are not UTF-8, with 400 naming the bytes rather than echoing U+FFFD`, async () => {
      const response = await api.request(path);
      assert.equal(response.status, 400);
      const { code, message } = await readError(response);
      assert.equal(code, 'invalid_query');
      assert.ok(!message.includes('\uFFFD'), message);
      assert.ok(message.startsWith(name), message);
      assert.ok(message.includes(` ${bytes} `), message);
    });
  }

  it('takes an encoded U+FFFD the client did send as text like any other', async () => {
    const response = await api.request('/v1/pets?status=%EF%BF%BD');
    assert.equal(response.status, 400);
    assert.match((await readError(response)).message, /\uFFFD/);
  });

  for (const petId of ["1' OR '1'='1", '1;DROP TABLE pets', '1%00', '-1', '0x10']) {
    it(`refuses /v1/pets/${petId} with 400 invalid_path`, async () => {
      await assertRefusedUnchanged(() => api.request(`/v1/pets/${encodeURIComponent(petId)}`), 'invalid_path');
    });
  }

  it("refuses a key made of SQL with 401, and the pets table is still whole", async () => {
    const before = await snapshotStore((await api.database()).db);
    const response = await api.request('/v1/pets', { key: "x' OR '1'='1" });
    assert.equal(response.status, 401);
    await readError(response);
    assert.deepEqual(await snapshotStore((await api.database()).db), before);
    assert.equal((await api.request('/v1/pets')).status, 200);
  });
});
