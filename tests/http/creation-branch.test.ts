import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { koaContextsDuring } from '../support/koa-contexts.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** What a client can see of an answer, less what differs on every creation (request id, date, the new id and its position). */
async function visible(response: Response) {
  const text = await response.text();
  const id = /^\{"id":(\d+)/.exec(text)?.[1];
  const headers = [...response.headers]
    .filter(([name]) => name !== 'x-request-id' && name !== 'date')
    .map(([name, value]) => [name, name === 'petstore-position' ? '<position>' : id === undefined ? value : value.replace(`/pets/${id}`, '/pets/<id>')]);
  return { status: response.status, headers, body: id === undefined ? text : text.replace(`"id":${id}`, '"id":<id>') };
}

/** A first creation: the key table has been read, and the test's check of answers has its OpenAPI document. */
async function warmedUp(api: TestService): Promise<void> {
  assert.equal((await api.createPet({ name: 'first', categoryId: 1 })).status, 201);
}

type RequestBody = NonNullable<RequestInit['body']>;

// The Koa route answers a POST whose target is not exactly /v1/pets: a query string leaves the branch.
const THROUGH_THE_APP = '/v1/pets?through=app';

describe('creations answered by the pipeline\'s branch before the app', () => {
  let api: TestService;
  before(async () => {
    api = await startTestService();
    await warmedUp(api);
  });
  after(() => api.stop());

  const post = (path: string, body: RequestBody, headers: Record<string, string> = { 'content-type': 'application/json' }) => api.request(path, { method: 'POST', headers, body });

  it('are answered without a Koa context, refusals too; a POST the branch leaves goes through the app', async () => {
    assert.equal(await koaContextsDuring(async () => {
      assert.equal((await post('/v1/pets', '{"name":"Rex","categoryId":1}')).status, 201);
      assert.equal((await post('/v1/pets', '{"name":""}')).status, 400);
    }), 0);
    assert.equal(await koaContextsDuring(async () => assert.equal((await post(THROUGH_THE_APP, '{"name":"Rex","categoryId":1}')).status, 201)), 1);
  });

  const cases: [string, () => [RequestBody, Record<string, string>?]][] = [
    ['a new pet', () => ['{"name":"Rex","categoryId":1,"status":"available"}']],
    ['a new pet with an Idempotency-Key', () => ['{"name":"Kept","categoryId":2}', { 'content-type': 'application/json', 'idempotency-key': `key-${Math.random()}` }]],
    ['a gzipped body', () => [gzipSync('{"name":"Zip","categoryId":3}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' }]],
    ['no Content-Type and no body', () => ['', {}]],
    ['another media type', () => ['{"name":"Rex","categoryId":1}', { 'content-type': 'text/plain' }]],
    ['another charset', () => ['{"name":"Rex","categoryId":1}', { 'content-type': 'application/json; charset=latin1' }]],
    ['an unknown Content-Encoding', () => ['{"name":"Rex","categoryId":1}', { 'content-type': 'application/json', 'content-encoding': 'br2' }]],
    ['text that is not JSON', () => ['{"name":']],
    ['bytes that are not UTF-8', () => [Buffer.from([0x7b, 0x22, 0x6e, 0xff, 0x22, 0x7d])]],
    ['a field that does not exist', () => ['{"name":"Rex","categoryId":1,"colour":"red"}']],
    ['an id', () => ['{"id":1,"name":"Rex","categoryId":1}']],
    ['no name', () => ['{"categoryId":1}']],
    ['a category id JSON cannot read exactly', () => ['{"name":"Rex","categoryId":9007199254740993}']],
    ['a status that does not exist', () => ['{"name":"Rex","categoryId":1,"status":"lost"}']],
    ['a "__proto__" key', () => ['{"name":"Rex","categoryId":1,"__proto__":{}}']],
    ['a body over the limit', () => [JSON.stringify({ name: 'x'.repeat(70 * 1024), categoryId: 1 })]],
    ['a malformed Idempotency-Key', () => ['{"name":"Rex","categoryId":1}', { 'content-type': 'application/json', 'idempotency-key': '' }]],
  ];
  for (const [what, make] of cases) {
    it(`give the app's status, headers and body for ${what}`, async () => {
      const [body, headers] = make();
      const [, again] = make();
      const branch = await visible(await post('/v1/pets', body, headers));
      // The same request again, for the app: an Idempotency-Key is replayed, so each side gets a key of its own.
      const app = await visible(await post(THROUGH_THE_APP, body, again ?? headers));
      assert.deepEqual(branch, app);
    });
  }

  it('leave a request without a valid key to the app, and answer one from an allowed browser origin with the app\'s CORS headers', async () => {
    const contexts = await koaContextsDuring(async () => {
      assert.equal((await api.request('/v1/pets', { method: 'POST', key: null, headers: { 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' })).status, 401);
      assert.equal((await api.request('/v1/pets', { method: 'POST', key: 'not-a-key', headers: { 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' })).status, 401);
    });
    assert.equal(contexts, 2);
    const withCors = await startTestService({ PETSTORE_CORS_ORIGINS: 'https://app.example.com' });
    try {
      await warmedUp(withCors);
      const headers = { 'content-type': 'application/json', origin: 'https://app.example.com' };
      const cors = (answer: Response) => ['access-control-allow-origin', 'access-control-expose-headers', 'vary'].map((name) => answer.headers.get(name));
      let byBranch: (string | null)[] = [];
      const contextsMade = await koaContextsDuring(async () => {
        const answer = await withCors.request('/v1/pets', { method: 'POST', headers, body: '{"name":"Rex","categoryId":1}' });
        assert.equal(answer.status, 201);
        byBranch = cors(answer);
      });
      assert.equal(contextsMade, 0);
      const byApp = cors(await withCors.request(THROUGH_THE_APP, { method: 'POST', headers, body: '{"name":"Rex","categoryId":1}' }));
      assert.equal(byBranch[0], 'https://app.example.com');
      assert.deepEqual(byBranch, byApp);
      const withoutOrigin = await withCors.request('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' });
      assert.equal(withoutOrigin.headers.get('vary'), 'Origin');
    } finally {
      await withCors.stop();
    }
  });

  it('carry the rate limit\'s fields as the app does, and leave a refused request to the app for its 429', async () => {
    const limited = await startTestService({ PETSTORE_RATE_LIMIT: '0.01,2' });
    try {
      const create = (path: string) => limited.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' });
      const first = await create('/v1/pets');
      const second = await create(THROUGH_THE_APP);
      assert.equal(first.headers.get('ratelimit-policy'), second.headers.get('ratelimit-policy'));
      assert.match(first.headers.get('ratelimit') ?? '', /^"per-key";r=1;t=\d+$/);
      assert.match(second.headers.get('ratelimit') ?? '', /^"per-key";r=0;t=\d+$/);
      const refused = await create('/v1/pets');
      assert.equal(refused.status, 429);
      assert.ok(refused.headers.get('retry-after'));
    } finally {
      await limited.stop();
    }
  });
});
