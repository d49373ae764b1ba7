import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NODE_TS_ARGS } from '../support/processes.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import type { RowChange } from '../../application/index.ts';
import type { SqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';

interface Pet {
  id: number;
  name: string;
  status?: string;
}

const otherProcess = fileURLToPath(new URL('fixtures/write-from-another-process.ts', import.meta.url));

describe('the listing stays exact while answers are cached', () => {
  let api: TestService;

  before(async () => {
    api = await startTestService();
  });
  after(() => api.stop());

  async function list(query: string): Promise<{ pets: Pet[]; link: string | null }> {
    const response = await api.request(`/v1/pets?${query}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    return { pets: (await response.json()) as Pet[], link: response.headers.get('link') };
  }

  async function create(name: string, status: string): Promise<Pet> {
    const response = await api.createPet({ name, categoryId: 1, status });
    assert.equal(response.status, 201);
    return (await response.json()) as Pet;
  }

  async function patch(id: number, status: string): Promise<void> {
    const response = await api.request(`/v1/pets/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status }) });
    assert.equal(response.status, 200);
  }

  /** Runs a write in a separate process on the service's SQLite file. */
  async function writeFromAnotherProcess(...args: string[]): Promise<Pet> {
    const { stdout } = await promisify(execFile)(process.execPath, [...NODE_TS_ARGS, otherProcess, join(api.directory, 'petstore.db'), ...args]);
    return JSON.parse(stdout) as Pet;
  }

  it('shows a pet created here in the next listing of the same query', async () => {
    const first = await create('first', 'available');
    const before = await list(`status=available&after=${first.id - 1}`);
    assert.deepEqual(before.pets.map((pet) => pet.id), [first.id]);
    const second = await create('second', 'available');
    const afterwards = await list(`status=available&after=${first.id - 1}`);
    assert.deepEqual(afterwards.pets.map((pet) => pet.id), [first.id, second.id]);
  });

  it('shows a status change at once in the unfiltered listing and in both filters it touches', async () => {
    const pet = await create('changing', 'available');
    const from = `after=${pet.id - 1}`;
    assert.equal((await list(from)).pets[0]!.status, 'available');
    assert.equal((await list(`${from}&status=available`)).pets.length, 1);
    assert.equal((await list(`${from}&status=pending`)).pets.length, 0);
    await patch(pet.id, 'pending');
    assert.equal((await list(from)).pets[0]!.status, 'pending');
    assert.equal((await list(`${from}&status=available`)).pets.length, 0);
    assert.deepEqual((await list(`${from}&status=pending`)).pets.map((each) => each.id), [pet.id]);
  });

  it('drops the next link once the pet it looked ahead at leaves the filter', async () => {
    const shown = await create('shown', 'pending');
    const lookedAhead = await create('looked ahead', 'pending');
    const query = `status=pending&limit=1&after=${shown.id - 1}`;
    const withNext = await list(query);
    assert.deepEqual(withNext.pets.map((pet) => pet.id), [shown.id]);
    assert.match(withNext.link ?? '', /rel="next"/);
    await patch(lookedAhead.id, 'sold');
    const withoutNext = await list(query);
    assert.deepEqual(withoutNext.pets.map((pet) => pet.id), [shown.id]);
    assert.equal(withoutNext.link, null);
  });

  it('keeps unrelated answers through this service\'s own creations: each commit is reported pet by pet', async () => {
    const sold = await create('sold before', 'sold');
    const before = await list(`status=sold&after=${sold.id - 1}`);
    const heard: (readonly RowChange[] | undefined)[] = [];
    (api.service.store as SqlitePetStore).commits.onCommitted(({ changes }) => heard.push(changes));
    const created = await Promise.all(Array.from({ length: 10 }, (_, index) => create(`available ${index}`, 'available')));
    assert.ok(heard.length > 0);
    assert.ok(heard.every((changes) => changes !== undefined), 'never "anything may have changed", which drops every cached answer');
    assert.deepEqual(heard.flatMap((changes) => changes!.map((change) => change.id)).sort((a, b) => a - b), created.map((pet) => pet.id).sort((a, b) => a - b));
    assert.deepEqual(await list(`status=sold&after=${sold.id - 1}`), before);
  });

  it('shows a pet another process added to the same file in the next listing', async () => {
    const mine = await create('mine', 'available');
    const query = `after=${mine.id - 1}`;
    assert.deepEqual((await list(query)).pets.map((pet) => pet.id), [mine.id]);
    const theirs = await writeFromAnotherProcess('add', 'theirs', 'available');
    assert.deepEqual((await list(query)).pets.map((pet) => pet.name), ['mine', 'theirs']);
    assert.ok(theirs.id > mine.id);
  });

  it('shows a status change another process made in the next listing', async () => {
    const pet = await create('changed elsewhere', 'available');
    const query = `status=available&after=${pet.id - 1}`;
    assert.deepEqual((await list(query)).pets.map((each) => each.id), [pet.id]);
    await writeFromAnotherProcess('status', String(pet.id), 'sold');
    assert.deepEqual((await list(query)).pets, []);
    assert.deepEqual((await list(`status=sold&after=${pet.id - 1}`)).pets.map((each) => each.id), [pet.id]);
  });

  it('answers HEAD with the headers of the cached GET and no body', async () => {
    const get = await api.request('/v1/pets?limit=3');
    const head = await api.request('/v1/pets?limit=3', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), get.headers.get('content-length'));
    assert.equal(head.headers.get('link'), get.headers.get('link'));
    assert.equal(await head.text(), '');
  });
});
