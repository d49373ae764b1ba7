import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpProblem } from '../../adapters/http/pipeline/errors.ts';
import type { Guard } from '../../adapters/http/guards/guards.ts';
import { koaContextsDuring } from '../support/koa-contexts.ts';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

// A guard added to the one list: it refuses a request that carries `X-Closed: yes`, and marks every answer it lets through.
const closedForTheDay: Guard = (request, response) => {
  if (request.headers['x-closed'] === 'yes') return new HttpProblem('unavailable', 'closed for the day', { 'Retry-After': '60' });
  response.setHeader('X-Guarded', 'yes');
  return undefined;
};

describe('one list of guards, run by every way of answering', () => {
  let api: TestService;
  before(async () => {
    api = await startTestService({}, { extraGuards: [closedForTheDay] });
    // The first creation reads the key, the first listing and inventory fill their caches: every branch can answer from here on.
    assert.equal((await api.createPet({ name: 'first', categoryId: 1 })).status, 201);
    assert.equal((await api.request('/v1/pets')).status, 200);
    assert.equal((await api.request('/v1/store/inventory')).status, 200);
  });
  after(() => api.stop());

  const ways: [string, (headers: Record<string, string>) => Promise<Response>, number][] = [
    ['a cached listing (a branch)', (headers) => api.request('/v1/pets', { headers }), 0],
    // Before any creation of the ways below, which changes the counts.
    ['a cached inventory (a branch)', (headers) => api.request('/v1/store/inventory', { headers }), 0],
    ['a creation (a branch)', (headers) => api.request('/v1/pets', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' }), 0],
    ['a placement (a branch)', async (headers) => {
      const { id } = (await (await api.createPet({ name: 'Ordered', categoryId: 1, status: 'available' })).json()) as { id: number };
      return api.request('/v1/store/orders', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ petId: id }) });
    }, 0],
    ['a Koa route', (headers) => api.request('/v1/pets/1', { headers }), 1],
  ];
  for (const [way, send, contexts] of ways) {
    it(`${way} carries what the added guard adds to an answer it lets through`, async () => {
      let answer: Response | undefined;
      assert.equal(await koaContextsDuring(async () => {
        answer = await send({});
      }), contexts, 'answered the way it names');
      assert.ok(answer!.status < 300, `answered ${answer!.status}`);
      assert.equal(answer!.headers.get('x-guarded'), 'yes');
    });

    it(`${way} is refused as the added guard refuses`, async () => {
      const answer = await send({ 'x-closed': 'yes' });
      assert.equal(answer.status, 503);
      assert.equal(answer.headers.get('retry-after'), '60');
      assert.equal((await readError(answer)).message, 'closed for the day');
    });
  }
});
