import { after, before, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createPetStoreClient, PetStoreError } from 'petstore/client';
import type { DeprecationNotice, Pet, PetStatus, PetStoreClient } from 'petstore/client';
import { GET_PET_DEPRECATION, GET_PET_SUNSET } from '../../contract/deprecations.ts';
import { ERROR_STATUS } from '../../contract/error-codes.ts';
import type { ErrorCode } from '../../contract/error-codes.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import type { TestService } from '../support/test-service.ts';
import { GROUP_LIMITS } from '../../application/index.ts';

/** The client against the real service: every method, and every error code a caller can meet through it. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let api: TestService;
let client: PetStoreClient;

before(async () => {
  api = await startTestService();
  // Quiet: the deprecation tests use clients of their own.
  client = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, onDeprecation: () => undefined });
});

after(async () => {
  await api.stop();
});

/** The call's failure, which must be a PetStoreError. */
async function failure(call: Promise<unknown>): Promise<PetStoreError> {
  const error = await call.then(() => undefined, (thrown: unknown) => thrown);
  assert.ok(error instanceof PetStoreError, `expected a PetStoreError, got ${String(error)}`);
  return error;
}

/** Every pet the service holds with this name, read without the client. */
async function petsNamed(name: string): Promise<unknown[]> {
  const all: { name: string }[] = [];
  for (let after = 0; ; ) {
    const page = (await (await api.request(`/v1/pets?limit=100&after=${after}`)).json()) as { id: number; name: string }[];
    if (page.length === 0) return all.filter((pet) => pet.name === name);
    all.push(...page);
    after = page.at(-1)!.id;
  }
}

describe('createPet', () => {
  it('adds a pet and answers it with its new id', async () => {
    const pet = await client.createPet({ name: 'Rex', categoryId: 1, status: 'available' });
    assert.ok(pet.id >= 1);
    assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 1, status: 'available' });
    assert.deepEqual(await petsNamed('Rex'), [pet]);
  });

  it('adds a pet without a status, which then has none', async () => {
    const pet = await client.createPet({ name: 'Statusless', categoryId: 2 });
    assert.deepEqual(pet, { id: pet.id, name: 'Statusless', categoryId: 2 });
  });

  it('repeats a creation under the same idempotencyKey as the same pet, adding nothing', async () => {
    const first = await client.createPet({ name: 'Once', categoryId: 3 }, { idempotencyKey: 'order-once-1' });
    const again = await client.createPet({ name: 'Once', categoryId: 3 }, { idempotencyKey: 'order-once-1' });
    assert.deepEqual(again, first);
    assert.equal((await petsNamed('Once')).length, 1);
  });

  it('gives each call its own key when none is given, so two calls add two pets', async () => {
    const first = await client.createPet({ name: 'Twin', categoryId: 4 });
    const second = await client.createPet({ name: 'Twin', categoryId: 4 });
    assert.notEqual(first.id, second.id);
    assert.equal((await petsNamed('Twin')).length, 2);
  });
});

describe('listPets', () => {
  // A service of its own, so the listing holds exactly these pets.
  let service: TestService;
  let lister: PetStoreClient;
  const made: Pet[] = [];

  before(async () => {
    service = await startTestService();
    lister = createPetStoreClient({ baseUrl: service.baseUrl, apiKey: TEST_API_KEY });
    for (const status of ['available', 'pending', 'available', 'sold', undefined] as const) {
      const name = `list ${made.length}`;
      made.push(await lister.createPet(status ? { name, categoryId: 1, status } : { name, categoryId: 1 }));
    }
  });
  after(() => service.stop());

  it('answers the first page in ascending id order', async () => {
    assert.deepEqual(await lister.listPets(), made);
  });

  it('filters by status', async () => {
    assert.deepEqual(await lister.listPets({ status: 'available' }), made.filter((pet) => pet.status === 'available'));
  });

  it('answers at most limit pets, continuing after the id given', async () => {
    assert.deepEqual(await lister.listPets({ limit: 2 }), made.slice(0, 2));
    assert.deepEqual(await lister.listPets({ limit: 2, after: made[1]!.id }), made.slice(2, 4));
  });
});

describe('getPet (deprecated)', () => {
  it('answers the pet and its ETag', async () => {
    const pet = await client.createPet({ name: 'Looked up', categoryId: 5, status: 'pending' });
    assert.deepEqual(await client.getPet(pet.id), { pet, etag: '"1"' });
  });

  it('tells onDeprecation once per client, with the dates and successor the service sent', async () => {
    const own: DeprecationNotice[] = [];
    const fresh = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, onDeprecation: (notice) => own.push(notice) });
    const pet = await fresh.createPet({ name: 'Twice', categoryId: 5 });
    await fresh.getPet(pet.id);
    await fresh.getPet(pet.id);
    await failure(fresh.getPet(987_654));
    assert.equal(own.length, 1);
    const [notice] = own;
    assert.equal(notice!.operation, 'getPet');
    assert.equal(notice!.deprecatedAt!.getTime(), Number(GET_PET_DEPRECATION.slice(1)) * 1000);
    assert.equal(notice!.sunsetAt!.getTime(), Date.parse(GET_PET_SUNSET));
    assert.equal(notice!.successor, `${api.baseUrl}/pets`);
    assert.equal(notice!.message, `petstore: getPet is deprecated since 2026-11-21 and will stop working on 2030-12-05; its successor is ${api.baseUrl}/pets`);
  });

  it('tells each client once: a second client is told again', async () => {
    const told: string[] = [];
    const first = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, onDeprecation: () => told.push('first') });
    const second = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, onDeprecation: () => told.push('second') });
    const pet = await first.createPet({ name: 'Shared', categoryId: 5 });
    for (const each of [first, second, first, second]) await each.getPet(pet.id);
    assert.deepEqual(told, ['first', 'second']);
  });

  it('warns through console.warn when no hook is given', async (context) => {
    const warn = mock.method(console, 'warn', () => undefined);
    context.after(() => warn.mock.restore());
    const plain = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
    const pet = await plain.createPet({ name: 'Warned', categoryId: 5 });
    await plain.getPet(pet.id);
    await plain.getPet(pet.id);
    assert.equal(warn.mock.callCount(), 1);
    assert.match(String(warn.mock.calls[0]!.arguments[0]), /^petstore: getPet is deprecated since 2026-11-21 and will stop working on 2030-12-05/);
  });

  it('does not warn for operations that are not deprecated', async () => {
    const own: DeprecationNotice[] = [];
    const fresh = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, onDeprecation: (notice) => own.push(notice) });
    const pet = await fresh.createPet({ name: 'Not looked up', categoryId: 5 });
    await fresh.listPets();
    await fresh.changePetStatus(pet.id, 'sold');
    assert.deepEqual(own, []);
  });
});

describe('changePetStatus (experimental)', () => {
  it('changes the status and answers the pet with its new ETag', async () => {
    const pet = await client.createPet({ name: 'Mover', categoryId: 6, status: 'available' });
    assert.deepEqual(await client.changePetStatus(pet.id, 'pending'), { pet: { ...pet, status: 'pending' }, etag: '"2"' });
    assert.deepEqual((await client.getPet(pet.id)).pet.status, 'pending');
  });

  it('applies with ifMatch set to the ETag getPet gave, and chains on the ETag it answers', async () => {
    const pet = await client.createPet({ name: 'Careful', categoryId: 6, status: 'available' });
    const { etag } = await client.getPet(pet.id);
    const changed = await client.changePetStatus(pet.id, 'pending', { ifMatch: etag });
    const again = await client.changePetStatus(pet.id, 'sold', { ifMatch: changed.etag });
    assert.deepEqual(again, { pet: { ...pet, status: 'sold' }, etag: '"3"' });
  });

  it('applies with ifMatch "*"', async () => {
    const pet = await client.createPet({ name: 'Any version', categoryId: 6 });
    assert.equal((await client.changePetStatus(pet.id, 'sold', { ifMatch: '*' })).pet.status, 'sold');
  });
});

describe('the log position a client has seen', () => {
  it('starts at 0, or at minPosition, and grows with each write it sees answered, never back', async () => {
    const own = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
    assert.equal(own.position, 0);
    assert.equal(createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, minPosition: 7 }).position, 7);
    const pet = await own.createPet({ name: 'Counted', categoryId: 1, status: 'available' }, { idempotencyKey: 'position-key' });
    const created = own.position;
    assert.ok(created > 0);
    await own.changePetStatus(pet.id, 'pending');
    assert.ok(own.position > created);
    const changed = own.position;
    await own.createPet({ name: 'Counted', categoryId: 1, status: 'available' }, { idempotencyKey: 'position-key' });
    assert.equal(own.position, changed, 'a replayed creation answers its older position; the client keeps the newer');
    assert.equal((await own.getPet(pet.id)).pet.status, 'pending');
  });

  it('is sent on every read: one past the log\'s end makes listPets, pets and getPet answer 400 invalid_header naming the end', async () => {
    const pet = await client.createPet({ name: 'Ahead', categoryId: 1 });
    const ahead = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, minPosition: client.position + 1_000_000, retry: { attempts: 1 }, onDeprecation: () => undefined });
    for (const read of [() => ahead.listPets(), () => ahead.pets().next(), () => ahead.getPet(pet.id)]) {
      const error = await failure(read());
      assert.equal(error.code, 'invalid_header');
      assert.match(error.message, /past the end of the log/);
    }
  });
});

/**
 * How a caller meets each of the service's error codes through the client; a string says why the
 * client cannot meet it. Typed by the code table, so a new code does not compile until it is here.
 */
const PROVOKE: Record<ErrorCode, ((client: PetStoreClient) => Promise<unknown>) | string> = {
  unauthorized: () => createPetStoreClient({ baseUrl: api.baseUrl, apiKey: 'not-a-key-0123456789' }).listPets(),
  invalid_query: (client) => client.listPets({ limit: 0 }),
  invalid_path: (client) => client.getPet(1.5),
  invalid_body: (client) => client.createPet({ name: ' ', categoryId: 1 }),
  invalid_header: (client) => client.createPet({ name: 'Keyed', categoryId: 1 }, { idempotencyKey: 'has a space' }),
  malformed_json: 'the client sends only what JSON.stringify wrote',
  unsupported_media_type: 'the client labels every body it sends as JSON',
  payload_too_large: (client) => client.createPet({ name: 'x'.repeat(70_000), categoryId: 1 }),
  headers_too_large: () => createPetStoreClient({ baseUrl: api.baseUrl, apiKey: 'k'.repeat(20_000) }).listPets(),
  request_timeout: 'the client sends each request whole, at once',
  not_found: (client) => client.getPet(987_654_321),
  method_not_allowed: 'the client calls each path only with a method it allows',
  limit_reached: 'the client makes no webhook subscriptions',
  pet_not_available: async (client) => client.placeOrder({ petId: (await client.createPet({ name: 'Unsold', categoryId: 1 })).id }),
  unknown_pet: (client) => client.placeOrder({ petId: 987_654_321 }),
  pet_reserved: async (client) => {
    const pet = await client.createPet({ name: 'Reserved', categoryId: 1, status: 'available' });
    await client.placeOrder({ petId: pet.id });
    return client.changePetStatus(pet.id, 'sold');
  },
  group_exists: async (client) => {
    await client.createConsumerGroup('provoked', { maxDeliveries: 2 });
    return client.createConsumerGroup('provoked', { maxDeliveries: 3 });
  },
  too_many_in_flight: async (client) => {
    await client.createConsumerGroup('capped', { start: 'end' });
    for (let index = 0; index <= GROUP_LIMITS.inFlightPerConsumer; index++) await client.createPet({ name: `Capped ${index}`, categoryId: 1 });
    await client.claim('capped', 'greedy', { max: GROUP_LIMITS.inFlightPerConsumer });
    return client.claim('capped', 'greedy');
  },
  illegal_transition: async (client) => client.changePetStatus((await client.createPet({ name: 'Final', categoryId: 1, status: 'sold' })).id, 'available'),
  version_mismatch: async (client) => {
    const pet = await client.createPet({ name: 'Stale', categoryId: 1, status: 'available' });
    await client.changePetStatus(pet.id, 'pending');
    return client.changePetStatus(pet.id, 'sold', { ifMatch: '"1"' });
  },
  idempotency_key_reused: async (client) => {
    await client.createPet({ name: 'First body', categoryId: 1 }, { idempotencyKey: 'reused-key' });
    return client.createPet({ name: 'Other body', categoryId: 1 }, { idempotencyKey: 'reused-key' });
  },
  rate_limited: async () => {
    // A service of its own with a bucket of one request that refills once in ~17 minutes.
    const limited = await startTestService({ PETSTORE_RATE_LIMIT: '0.001,1' });
    try {
      const limitedClient = createPetStoreClient({ baseUrl: limited.baseUrl, apiKey: TEST_API_KEY, retry: { attempts: 1 } });
      await limitedClient.listPets();
      return await limitedClient.listPets();
    } finally {
      await limited.stop();
    }
  },
  unavailable: async () => {
    // The service's own 503: another connection holds SQLite's write lock past the busy timeout.
    const holder = await openSqliteConnection(join(api.directory, 'petstore.db'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      return await createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, retry: { attempts: 1 } }).createPet({ name: 'Blocked', categoryId: 1 });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  },
  internal: 'only a defect in the service answers it',
};

describe('every error code a caller can meet becomes one PetStoreError', () => {
  for (const [code, provoke] of Object.entries(PROVOKE) as [ErrorCode, (typeof PROVOKE)[ErrorCode]][]) {
    if (typeof provoke === 'string') continue;
    it(`${code}: status ${ERROR_STATUS[code]}, the service's message, the request id`, async () => {
      const error = await failure(provoke(client));
      assert.equal(error.code, code, error.message);
      assert.equal(error.status, ERROR_STATUS[code]);
      assert.equal(error.name, 'PetStoreError');
      assert.ok(error.message.length > 0);
      // Every answer carries one, the parser's own (431) included.
      assert.match(error.requestId ?? '', UUID);
      if (code === 'unavailable') {
        assert.equal(error.retryAfterMs, 1000, 'the Retry-After the service sent');
        assert.deepEqual(await petsNamed('Blocked'), [], 'nothing was added');
      }
    });
  }

  it('leaves out only codes the client cannot meet, each with its reason', () => {
    const unreachable = Object.entries(PROVOKE).filter(([, provoke]) => typeof provoke === 'string').map(([code]) => code);
    assert.deepEqual(unreachable.sort(), ['internal', 'limit_reached', 'malformed_json', 'method_not_allowed', 'request_timeout', 'unsupported_media_type']);
  });
});

describe('mistakes of the caller', () => {
  it('a key that cannot be sent in a header is a TypeError at the call, not a network failure', async () => {
    const broken = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: 'line\nbreak', retry: { attempts: 1 } });
    await assert.rejects(broken.listPets(), TypeError);
  });

  it('a missing or empty apiKey fails when the client is made, saying the key is missing', () => {
    // What a program meets when PETSTORE_API_KEY was set without `export`: the variable is undefined.
    for (const apiKey of [undefined, '', '  ']) {
      assert.throws(() => createPetStoreClient({ baseUrl: api.baseUrl, apiKey: apiKey as unknown as string }), {
        name: 'TypeError',
        message: `createPetStoreClient: apiKey is missing (got ${JSON.stringify(apiKey) ?? 'undefined'}): pass the API key the service accepts`,
      });
    }
  });

  it('a baseUrl that is not a URL fails when the client is made', () => {
    assert.throws(() => createPetStoreClient({ baseUrl: 'api.example.com/v1', apiKey: TEST_API_KEY }), TypeError);
  });
});

describe('pets(): every page, following Link rel="next"', () => {
  const STATUSES: readonly (PetStatus | undefined)[] = ['available', 'pending', 'sold', undefined];
  let service: TestService;
  let walker: PetStoreClient;
  const created: Pet[] = [];

  before(async () => {
    service = await startTestService();
    walker = createPetStoreClient({ baseUrl: service.baseUrl, apiKey: TEST_API_KEY });
    for (let start = 0; start < 320; start += 20) {
      const batch = Array.from({ length: 20 }, (_, offset) => {
        const status = STATUSES[(start + offset) % STATUSES.length];
        return walker.createPet(status ? { name: `walk ${start + offset}`, categoryId: 1, status } : { name: `walk ${start + offset}`, categoryId: 1 });
      });
      created.push(...(await Promise.all(batch)));
    }
    created.sort((a, b) => a.id - b.id);
  });
  after(() => service.stop());

  async function walk(query: Parameters<PetStoreClient['pets']>[0]): Promise<Pet[]> {
    const seen: Pet[] = [];
    for await (const pet of walker.pets(query)) seen.push(pet);
    return seen;
  }

  it('yields all 320 pets exactly once, in id order', async () => {
    assert.deepEqual(await walk({}), created);
  });

  it('yields the same with pages of 7', async () => {
    assert.deepEqual(await walk({ limit: 7 }), created);
  });

  for (const status of ['available', 'pending', 'sold'] as const) {
    it(`yields every ${status} pet exactly once, the filter kept on every page`, async () => {
      const expected = created.filter((pet) => pet.status === status);
      assert.equal(expected.length, 80);
      assert.deepEqual(await walk({ status, limit: 9 }), expected);
    });
  }

  it('stops where the caller stops', async () => {
    const first: Pet[] = [];
    for await (const pet of walker.pets({ limit: 5 })) {
      first.push(pet);
      if (first.length === 12) break;
    }
    assert.deepEqual(first, created.slice(0, 12));
  });
});
