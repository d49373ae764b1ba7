import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** The three pet operations as the interface describes them, against the real service over HTTP. */

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

let api: TestService;

before(async () => {
  api = await startTestService();
});

after(async () => {
  await api.stop();
});

async function createPet(body: { name: string; categoryId: number; status?: string }): Promise<Pet> {
  const response = await api.createPet(body);
  assert.equal(response.status, 201, `creating ${JSON.stringify(body)} answered ${response.status}`);
  return (await response.json()) as Pet;
}

async function listPets(query = ''): Promise<Pet[]> {
  const response = await api.request(`/v1/pets${query}`);
  assert.equal(response.status, 200, `listing ${query} answered ${response.status}`);
  return (await response.json()) as Pet[];
}

function ids(pets: readonly Pet[]): number[] {
  return pets.map((pet) => pet.id);
}

describe('POST /v1/pets (createPet)', () => {
  it('answers 201 with the created Pet: an assigned integer id and the fields as sent', async () => {
    const response = await api.createPet({ name: 'Rex', categoryId: 3, status: 'available' });
    assert.equal(response.status, 201);
    const pet = (await response.json()) as Pet;
    assert.ok(Number.isSafeInteger(pet.id) && pet.id >= 1, `id ${pet.id} is not a positive integer`);
    assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 3, status: 'available' });
  });

  it('answers with Content-Type application/json', async () => {
    const response = await api.createPet({ name: 'Json', categoryId: 1 });
    assert.equal(response.status, 201);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
    await response.body?.cancel();
  });

  it('lists the created Pet\'s keys in the order id, name, categoryId, status', async () => {
    const response = await api.createPet({ status: 'pending', categoryId: 2, name: 'Order' });
    assert.deepEqual(Object.keys((await response.json()) as Pet), ['id', 'name', 'categoryId', 'status']);
  });

  it('sets an absolute Location header naming the new pet on the public base', async () => {
    const response = await api.createPet({ name: 'Located', categoryId: 1 });
    const pet = (await response.json()) as Pet;
    assert.equal(response.headers.get('location'), `${api.baseUrl}/pets/${pet.id}`);
  });

  it('gives a Location header that GET answers with the same pet', async () => {
    const response = await api.createPet({ name: 'Follow me', categoryId: 8, status: 'sold' });
    const created = (await response.json()) as Pet;
    const location = new URL(response.headers.get('location')!);
    const fetched = await api.request(location.pathname);
    assert.equal(fetched.status, 200);
    assert.deepEqual(await fetched.json(), created);
  });

  it('assigns a new, larger id to each pet', async () => {
    const first = await createPet({ name: 'First', categoryId: 1 });
    const second = await createPet({ name: 'Second', categoryId: 1 });
    assert.ok(second.id > first.id, `ids ${first.id} then ${second.id}`);
  });

  it('gives each of 20 pets created at once its own id', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => api.createPet({ name: `Concurrent ${index}`, categoryId: 1 })));
    assert.deepEqual(responses.map((response) => response.status), responses.map(() => 201));
    const created = (await Promise.all(responses.map((response) => response.json()))) as Pet[];
    assert.equal(new Set(ids(created)).size, 20);
  });

  it('creates a pet without status whose answer has no status key', async () => {
    const pet = await createPet({ name: 'No status', categoryId: 4 });
    assert.equal(Object.hasOwn(pet, 'status'), false);
    assert.deepEqual(Object.keys(pet), ['id', 'name', 'categoryId']);
  });
});

describe('GET /v1/pets (listPets)', () => {
  before(async () => {
    // At least 25 pets exist, so the default page of 20 is not the whole catalogue.
    const statuses = ['available', 'pending', 'sold', undefined] as const;
    for (let index = 0; index < 25; index++) {
      const status = statuses[index % statuses.length];
      await createPet(status === undefined ? { name: `Bulk ${index}`, categoryId: 10 } : { name: `Bulk ${index}`, categoryId: 10, status });
    }
  });

  it('answers 200 with a plain JSON array', async () => {
    const response = await api.request('/v1/pets');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.ok(Array.isArray(await response.json()));
  });

  it('returns 20 pets when no limit is given', async () => {
    assert.equal((await listPets()).length, 20);
  });

  it('returns pets in ascending id order', async () => {
    const listed = ids(await listPets('?limit=100'));
    assert.deepEqual(listed, [...listed].sort((a, b) => a - b));
    assert.equal(new Set(listed).size, listed.length, 'an id is listed twice');
  });

  it('returns the first pets by id: the default page is the start of the full listing', async () => {
    const all = await listPets('?limit=100');
    assert.deepEqual(await listPets(), all.slice(0, 20));
  });

  it('returns at most `limit` pets, the lowest ids first', async () => {
    const all = await listPets('?limit=100');
    assert.deepEqual(await listPets('?limit=5'), all.slice(0, 5));
  });

  it('returns every pet when limit is 100 and fewer than 100 exist', async () => {
    const all = await listPets('?limit=100');
    assert.ok(all.length >= 25 && all.length < 100, `the catalogue holds ${all.length} pets`);
    assert.ok(all.some((pet) => pet.name === 'Bulk 24'));
  });

  it('lists each Pet with its keys in the order id, name, categoryId, status', async () => {
    for (const pet of await listPets('?limit=100')) {
      const expected = pet.status === undefined ? ['id', 'name', 'categoryId'] : ['id', 'name', 'categoryId', 'status'];
      assert.deepEqual(Object.keys(pet), expected);
    }
  });

  for (const status of ['available', 'pending', 'sold'] as const) {
    it(`returns only ${status} pets, and all of them, for status=${status}`, async () => {
      const all = await listPets('?limit=100');
      const filtered = await listPets(`?status=${status}&limit=100`);
      assert.ok(filtered.length > 0);
      assert.deepEqual(filtered, all.filter((pet) => pet.status === status));
    });
  }

  it('applies limit after the status filter', async () => {
    const allPending = await listPets('?status=pending&limit=100');
    assert.ok(allPending.length > 2);
    assert.deepEqual(await listPets('?status=pending&limit=2'), allPending.slice(0, 2));
  });

  it('leaves a pet created without status out of every status filter', async () => {
    const pet = await createPet({ name: 'Unfiled', categoryId: 5 });
    for (const status of ['available', 'pending', 'sold']) {
      const filtered = await listPets(`?status=${status}&limit=100`);
      assert.ok(!ids(filtered).includes(pet.id), `status=${status} lists pet ${pet.id}`);
    }
  });

  it('lists a pet created without status with no status key', async () => {
    const pet = await createPet({ name: 'Unfiled too', categoryId: 5 });
    const listed = (await listPets('?limit=100')).find((candidate) => candidate.id === pet.id);
    assert.ok(listed, `pet ${pet.id} is not listed`);
    assert.equal(Object.hasOwn(listed, 'status'), false);
  });

  it('lists a created pet in the very next listing (read-your-writes)', async () => {
    const pet = await createPet({ name: 'Fresh', categoryId: 6, status: 'available' });
    const listed = await listPets('?limit=100');
    assert.deepEqual(listed.find((candidate) => candidate.id === pet.id), pet);
  });

  it('lists a created pet in the very next filtered listing (read-your-writes)', async () => {
    const pet = await createPet({ name: 'Fresh sold', categoryId: 6, status: 'sold' });
    const listed = await listPets('?status=sold&limit=100');
    assert.deepEqual(listed.find((candidate) => candidate.id === pet.id), pet);
  });
});

describe('GET /v1/pets/{petId} (getPet, deprecated)', () => {
  it('answers 200 with the Pet as created', async () => {
    const created = await createPet({ name: 'Fetched', categoryId: 7, status: 'pending' });
    const response = await api.request(`/v1/pets/${created.id}`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
    const pet = (await response.json()) as Pet;
    assert.deepEqual(pet, created);
    assert.deepEqual(Object.keys(pet), ['id', 'name', 'categoryId', 'status']);
  });

  it('answers 200 with a Pet without status key when it was created without status', async () => {
    const created = await createPet({ name: 'Fetched bare', categoryId: 7 });
    const response = await api.request(`/v1/pets/${created.id}`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { id: created.id, name: 'Fetched bare', categoryId: 7 });
  });

  it('answers 404 not_found for an id no pet has', async () => {
    const response = await api.request('/v1/pets/987654321');
    assert.equal(response.status, 404);
    assert.equal((await readError(response)).code, 'not_found');
  });
});

describe('HEAD on the GET routes', () => {
  it('answers HEAD /v1/pets with 200, a JSON content type and no body', async () => {
    const response = await api.request('/v1/pets', { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
    assert.equal(await response.text(), '');
  });

  it('answers HEAD /v1/pets/{petId} with 200 and no body', async () => {
    const pet = await createPet({ name: 'Headed', categoryId: 9 });
    const response = await api.request(`/v1/pets/${pet.id}`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), '');
  });

  it('answers HEAD /v1/pets/{petId} with 404 for an id no pet has', async () => {
    const response = await api.request('/v1/pets/987654321', { method: 'HEAD' });
    assert.equal(response.status, 404);
    assert.equal(await response.text(), '');
  });

  it('answers HEAD /v1/pets without a key with 401', async () => {
    const response = await api.request('/v1/pets', { method: 'HEAD', key: null });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer');
  });
});
