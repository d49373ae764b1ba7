import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

describe('store orders over HTTP', () => {
  let api: TestService;
  before(async () => {
    api = await startTestService();
  });
  after(() => api.stop());

  const json = { 'content-type': 'application/json' };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    api.request('/v1/store/orders', { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });
  const patch = (id: number, body: unknown, headers: Record<string, string> = {}) =>
    api.request(`/v1/store/orders/${id}`, { method: 'PATCH', headers: { ...json, ...headers }, body: JSON.stringify(body) });
  const petOf = async (id: number) => (await (await api.request(`/v1/pets/${id}`)).json()) as { status?: string };
  const newPet = async (status?: string) => (await (await api.createPet({ name: 'Rex', categoryId: 1, ...(status ? { status } : {}) })).json()) as { id: number };

  it('places an order: 201 with Location, ETag and position, its pet pending in the same commit', async () => {
    const pet = await newPet('available');
    const response = await post({ petId: pet.id, shipDate: '2026-12-24T10:00:00+01:00' });
    assert.equal(response.status, 201);
    const order = (await response.json()) as { id: number };
    assert.deepEqual(order, { id: order.id, petId: pet.id, status: 'placed', shipDate: '2026-12-24T10:00:00+01:00', complete: false });
    assert.equal(response.headers.get('location'), `${api.baseUrl}/store/orders/${order.id}`);
    assert.equal(response.headers.get('etag'), '"1"');
    const position = response.headers.get('petstore-position')!;
    assert.equal((await petOf(pet.id)).status, 'pending');
    const events = (await (await api.request(`/v1/events?after=${Number(position) - 2}`)).json()) as { type: string; subject: string }[];
    assert.deepEqual(events.map(({ type, subject }) => [type, subject]), [
      ['com.petstore.order.placed.v1', `store/orders/${order.id}`], ['com.petstore.pet.status-changed.v1', `pets/${pet.id}`],
    ]);
    const got = await api.request(`/v1/store/orders/${order.id}`, { headers: { 'petstore-min-position': position } });
    assert.deepEqual([got.status, got.headers.get('etag'), await got.json()], [200, '"1"', order]);
  });

  it('refuses a pet that is not available (409 pet_not_available) or unknown (422 unknown_pet), and bodies that are not a NewOrder (400)', async () => {
    const taken = await newPet('available');
    assert.equal((await post({ petId: taken.id })).status, 201);
    assert.equal((await readError(await post({ petId: taken.id }))).code, 'pet_not_available');
    assert.equal((await readError(await post({ petId: (await newPet()).id }))).code, 'pet_not_available');
    const unknown = await readError(await post({ petId: 987_654_321 }));
    assert.deepEqual([unknown.code, unknown.status], ['unknown_pet', 422]);
    for (const body of [{ petId: taken.id, quantity: 1 }, {}, { petId: 1.5 }, { petId: '1' }, { petId: taken.id, shipDate: 'tomorrow' }, [taken.id]]) {
      const error = await readError(await post(body));
      assert.equal(error.code, 'invalid_body', JSON.stringify(body));
    }
    const rounded = await readError(await api.request('/v1/store/orders', { method: 'POST', headers: json, body: '{"petId": 9007199254740993}' }));
    assert.match(rounded.message, /petId must be an integer/);
  });

  it('approves, delivers (the pet sold), and refuses other moves and stale versions', async () => {
    const pet = await newPet('available');
    const order = (await (await post({ petId: pet.id })).json()) as { id: number };
    assert.equal((await readError(await patch(order.id, { status: 'delivered' }))).code, 'illegal_transition');
    assert.equal((await readError(await patch(order.id, { status: 'approved' }, { 'if-match': '"5"' }))).code, 'version_mismatch');
    const approved = await patch(order.id, { status: 'approved' }, { 'if-match': '"1"' });
    assert.deepEqual([approved.status, approved.headers.get('etag'), ((await approved.json()) as { status: string }).status], [200, '"2"', 'approved']);
    const delivered = await patch(order.id, { status: 'delivered' });
    assert.deepEqual(await delivered.json(), { id: order.id, petId: pet.id, status: 'delivered', complete: true });
    assert.equal((await petOf(pet.id)).status, 'sold');
    assert.equal((await readError(await api.request(`/v1/store/orders/${order.id}`, { method: 'DELETE' }))).code, 'illegal_transition');
    assert.equal((await readError(await patch(order.id, { status: 'cancelled' }))).code, 'invalid_body');
  });

  it('cancels with 204, again 204, the pet available again; a reserved pet refuses its own PATCH with 409 pet_reserved', async () => {
    const pet = await newPet('available');
    const order = (await (await post({ petId: pet.id })).json()) as { id: number };
    const reserved = await readError(await api.request(`/v1/pets/${pet.id}`, { method: 'PATCH', headers: json, body: '{"status":"sold"}' }));
    assert.deepEqual([reserved.code, reserved.status], ['pet_reserved', 409]);
    for (let round = 0; round < 2; round++) assert.equal((await api.request(`/v1/store/orders/${order.id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await petOf(pet.id)).status, 'available');
    assert.equal(((await (await api.request(`/v1/store/orders/${order.id}`)).json()) as { status: string }).status, 'cancelled');
    assert.equal((await api.request(`/v1/pets/${pet.id}`, { method: 'PATCH', headers: json, body: '{"status":"sold"}' })).status, 200);
  });

  it('lists orders in id order with filters and Link paging; bad values are 400 invalid_query; unknown orders 404, bad ids 400', async () => {
    const pets = [await newPet('available'), await newPet('available'), await newPet('available')];
    const ids: number[] = [];
    for (const pet of pets) ids.push(((await (await post({ petId: pet.id })).json()) as { id: number }).id);
    const first = await api.request(`/v1/store/orders?limit=2&after=${ids[0]! - 1}`);
    assert.deepEqual(((await first.json()) as { id: number }[]).map((order) => order.id), ids.slice(0, 2));
    assert.equal(first.headers.get('link'), `<${api.baseUrl}/store/orders?limit=2&after=${ids[1]}>; rel="next"`);
    const byPet = (await (await api.request(`/v1/store/orders?petId=${pets[2]!.id}&status=placed`)).json()) as { id: number }[];
    assert.deepEqual(byPet.map((order) => order.id), [ids[2]]);
    for (const query of ['limit=0', 'limit=101', 'status=shipped', 'petId=-1', 'petId=0', 'after=x', 'limit=1&limit=2']) {
      assert.equal((await readError(await api.request(`/v1/store/orders?${query}`))).code, 'invalid_query', query);
    }
    assert.equal((await readError(await api.request('/v1/store/orders/987654321'))).code, 'not_found');
    assert.equal((await readError(await api.request('/v1/store/orders/1x'))).code, 'invalid_path');
    assert.equal((await api.request('/v1/store/orders', { key: null })).status, 401);
  });

  it('answers a repeated Idempotency-Key with the first order, and counts the pets by status', async () => {
    const pet = await newPet('available');
    const first = await post({ petId: pet.id }, { 'idempotency-key': 'order-once' });
    const again = await post({ petId: pet.id }, { 'idempotency-key': 'order-once' });
    assert.deepEqual([again.status, await again.json()], [201, await first.json()]);
    assert.equal((await readError(await post({ petId: pet.id, shipDate: '2027-01-01T00:00:00Z' }, { 'idempotency-key': 'order-once' }))).code, 'idempotency_key_reused');
    const before = (await (await api.request('/v1/store/inventory')).json()) as Record<string, number>;
    const created = await api.createPet({ name: 'Counted', categoryId: 1, status: 'sold' });
    const inventory = await api.request('/v1/store/inventory', { headers: { 'petstore-min-position': created.headers.get('petstore-position')! } });
    assert.deepEqual(await inventory.json(), { ...before, sold: before.sold! + 1 });
  });
});
