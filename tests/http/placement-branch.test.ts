import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { koaContextsDuring } from '../support/koa-contexts.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** What a client can see of an answer, less what differs on every placement (request id, date, the new order's id and its position). */
async function visible(response: Response) {
  const text = await response.text();
  const id = /^\{"id":(\d+)/.exec(text)?.[1];
  const headers = [...response.headers]
    .filter(([name]) => name !== 'x-request-id' && name !== 'date')
    .map(([name, value]) => [name, name === 'petstore-position' ? '<position>' : id === undefined ? value : value.replace(`/store/orders/${id}`, '/store/orders/<id>')]);
  return { status: response.status, headers, body: (id === undefined ? text : text.replace(`"id":${id}`, '"id":<id>')).replace(/"petId":\d+/, '"petId":<pet>') };
}

// The Koa route answers a POST whose target is not exactly /v1/store/orders: a query string leaves the branch.
const THROUGH_THE_APP = '/v1/store/orders?through=app';

describe('placements answered by the pipeline\'s creation branch before the app', () => {
  let api: TestService;
  before(async () => {
    api = await startTestService();
  });
  after(() => api.stop());

  const post = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => api.request(path, { method: 'POST', headers, body });
  const availablePet = async () => ((await (await api.createPet({ name: 'Rex', categoryId: 1, status: 'available' })).json()) as { id: number }).id;

  it('are answered without a Koa context, refusals too; a POST the branch leaves goes through the app', async () => {
    const pets = [await availablePet(), await availablePet()];
    assert.equal(await koaContextsDuring(async () => {
      assert.equal((await post('/v1/store/orders', `{"petId":${pets[0]}}`)).status, 201);
      assert.equal((await post('/v1/store/orders', `{"petId":${pets[0]}}`)).status, 409);
      assert.equal((await post('/v1/store/orders', '{"petId":"x"}')).status, 400);
    }), 0);
    assert.equal(await koaContextsDuring(async () => assert.equal((await post(THROUGH_THE_APP, `{"petId":${pets[1]}}`)).status, 201)), 1);
  });

  const cases: [string, (petId: number) => [string, Record<string, string>?]][] = [
    ['an order for an available pet', (petId) => [`{"petId":${petId},"shipDate":"2027-01-01T10:00:00Z"}`]],
    ['an order with an Idempotency-Key', (petId) => [`{"petId":${petId}}`, { 'content-type': 'application/json', 'idempotency-key': `key-${Math.random()}` }]],
    ['a pet that does not exist', () => ['{"petId":9000000000}']],
    ['a field that does not exist', (petId) => [`{"petId":${petId},"quantity":1}`]],
    ['another media type', (petId) => [`{"petId":${petId}}`, { 'content-type': 'text/plain' }]],
    ['text that is not JSON', () => ['{"petId":']],
    ['a malformed Idempotency-Key', (petId) => [`{"petId":${petId}}`, { 'content-type': 'application/json', 'idempotency-key': '' }]],
  ];
  for (const [what, make] of cases) {
    it(`give the app's status, headers and body for ${what}`, async () => {
      // Each side orders a pet of its own, and gets an Idempotency-Key of its own.
      const [body, headers] = make(await availablePet());
      const [again, againHeaders] = make(await availablePet());
      const branch = await visible(await post('/v1/store/orders', body, headers));
      const app = await visible(await post(THROUGH_THE_APP, again, againHeaders ?? headers));
      assert.deepEqual(branch, app);
    });
  }

  it('give the app\'s 409 for a pet already held, and leave a request without a valid key to the app', async () => {
    const held = await availablePet();
    assert.equal((await post('/v1/store/orders', `{"petId":${held}}`)).status, 201);
    assert.deepEqual(await visible(await post('/v1/store/orders', `{"petId":${held}}`)), await visible(await post(THROUGH_THE_APP, `{"petId":${held}}`)));
    const contexts = await koaContextsDuring(async () => {
      assert.equal((await api.request('/v1/store/orders', { method: 'POST', key: null, headers: { 'content-type': 'application/json' }, body: `{"petId":${held}}` })).status, 401);
    });
    assert.equal(contexts, 1);
  });
});
