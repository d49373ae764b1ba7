import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** Writes say the log position of their commit; reads asked for "at least this new" answer from a state that includes it. */

let api: TestService;

before(async () => {
  api = await startTestService();
});

after(async () => {
  await api.stop();
});

const positionOf = (response: Response) => Number(response.headers.get('petstore-position'));
const atLeast = (position: number | string) => ({ headers: { 'petstore-min-position': String(position) } });

describe('the log position of a write', () => {
  it('is on every creation, growing with each', async () => {
    const first = await api.createPet({ name: 'Rex', categoryId: 1 });
    const second = await api.createPet({ name: 'Tom', categoryId: 1 });
    assert.equal(first.status, 201);
    assert.ok(positionOf(first) > 0, `got ${first.headers.get('petstore-position')}`);
    assert.ok(positionOf(second) > positionOf(first));
  });

  it('is on a status change; a change to the current status answers the position of the last change', async () => {
    const created = await api.createPet({ name: 'Max', categoryId: 1, status: 'available' });
    const { id } = (await created.json()) as { id: number };
    const patch = () => api.request(`/v1/pets/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"status":"pending"}' });
    const changed = await patch();
    assert.equal(changed.status, 200);
    assert.ok(positionOf(changed) > positionOf(created));
    assert.equal(positionOf(await patch()), positionOf(changed));
  });

  it('of a replayed creation (the same Idempotency-Key) is the position of the creation', async () => {
    const create = () =>
      api.request('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'position-replay' }, body: '{"name":"Kit","categoryId":2}' });
    const first = await create();
    await api.createPet({ name: 'Later', categoryId: 1 });
    const again = await create();
    assert.equal(again.status, 201);
    assert.equal(positionOf(again), positionOf(first));
  });
});

describe('a read asking for at least a position', () => {
  it('answers a listing and a pet that include the write whose position it names', async () => {
    const created = await api.createPet({ name: 'Fresh', categoryId: 3 });
    const { id } = (await created.json()) as { id: number };
    const listing = await api.request(`/v1/pets?after=${id - 1}&limit=1`, atLeast(positionOf(created)));
    assert.deepEqual(((await listing.json()) as { id: number }[]).map((pet) => pet.id), [id]);
    assert.equal((await api.request(`/v1/pets/${id}`, atLeast(positionOf(created)))).status, 200);
  });

  it('refuses a position that is not decimal digits with 400 invalid_header, on both reads', async () => {
    for (const value of ['-1', '1.5', 'x', '', '99999999999999999']) {
      for (const path of ['/v1/pets', '/v1/pets/1']) {
        const answer = await api.request(path, atLeast(value));
        assert.equal(answer.status, 400, `${path} ${JSON.stringify(value)}`);
        assert.equal((await readError(answer)).code, 'invalid_header');
      }
    }
  });

  it('answers 503 with Retry-After for a position the log has not reached, after a bounded wait, on both reads', async () => {
    for (const path of ['/v1/pets?limit=3', '/v1/pets/1']) {
      const answer = await api.request(path, atLeast(1_000_000));
      assert.equal(answer.status, 503, path);
      assert.equal(answer.headers.get('retry-after'), '1');
      assert.equal((await readError(answer)).code, 'unavailable');
    }
  });
});
