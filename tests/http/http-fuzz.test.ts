import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sql } from 'kysely';
import { errorCodeOf, rawExchange } from '../support/raw-http.ts';
import type { RawResponse } from '../support/raw-http.ts';
import { wireRequest } from '../support/request-arbitraries.ts';
import type { WireRequest } from '../support/request-arbitraries.ts';
import { verifyProjection } from '../support/projection-check.ts';
import { seedFrom } from '../support/seeded-random.ts';
import { snapshotStore } from '../support/store-snapshot.ts';
import type { StoreSnapshot } from '../support/store-snapshot.ts';
import { TEST_API_KEY, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/**
 * Property-based tests over the real HTTP server, with requests written byte by byte: random methods,
 * paths, query strings, headers and bodies (any JSON, deep nesting, huge strings, numbers past 2^53,
 * `__proto__` and `constructor` keys, bytes that are not JSON), status changes with random bodies and
 * If-Match headers on pets that exist and pets that do not, and bytes that are not HTTP at all.
 * FUZZ_RUNS sets the number of cases (1,000 in `npm test`, 10,000 in `npm run test:fuzz`);
 * FUZZ_SEED replays a run.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = seedFrom('FUZZ_SEED');
// Far above any answer's time on a loaded machine, far below a hang.
const ANSWER_WITHIN_MS = 5000;

// Pets created before the cases, with every kind of status: the status changes aim at these.
const EXISTING_PETS = 200;
const STATUSES_AT_START = [undefined, 'available', 'pending', 'sold'] as const;

let api: TestService;

before(async () => {
  api = await startTestService();
  for (let id = 1; id <= EXISTING_PETS; id++) {
    const status = STATUSES_AT_START[id % STATUSES_AT_START.length];
    const response = await api.createPet({ name: `pet ${id}`, categoryId: id, ...(status ? { status } : {}) });
    assert.equal(response.status, 201, await response.text());
  }
});
after(async () => {
  await api.stop();
});

/** The store snapshot plus a sum over every pet's status and version: a status change moves it. */
async function snapshot(): Promise<StoreSnapshot & { petsChecksum: number }> {
  const { rows } = await sql<{ petsChecksum: number }>`
    select total(version) + total(id * case status when 'available' then 1 when 'pending' then 2 when 'sold' then 3 else 0 end) * 8 as petsChecksum
    from pets`.execute((await api.database()).db);
  return { ...(await snapshotStore((await api.database()).db)), petsChecksum: rows[0]!.petsChecksum };
}

/**
 * A 200 to a status change: at most one new event, a PetStatusChanged of the pet named in the path,
 * and the read model shows the pet as answered, at the version of the ETag.
 */
async function checkStatusChange(request: WireRequest, response: RawResponse, before: StoreSnapshot, after: StoreSnapshot): Promise<void> {
  const pet = JSON.parse(response.body.toString('utf8')) as { id: number; status?: string };
  assert.equal(pet.id, request.changesPet);
  const row = await (await api.database()).db.selectFrom('pets').select(['status', 'version']).where('id', '=', pet.id).executeTakeFirstOrThrow();
  assert.equal(row.status, pet.status ?? null);
  assert.equal(response.headers.etag, `"${row.version}"`);
  if (after.events === before.events) {
    assert.deepEqual(after, before, 'a status change to the same status changed the store');
    return;
  }
  assert.deepEqual({ ...after, lastPosition: 0, petsChecksum: 0 }, { ...before, events: before.events + 1, lastPosition: 0, petsChecksum: 0 });
  const last = await (await api.database()).db.selectFrom('events').select(['stream_id', 'stream_version', 'type']).orderBy('position', 'desc').limit(1).executeTakeFirstOrThrow();
  assert.deepEqual(last, { stream_id: `pet-${pet.id}`, stream_version: row.version, type: 'PetStatusChanged' });
}

/** Everything that must hold for one request, whatever it was. */
async function checkOneRequest(request: WireRequest): Promise<number | 'no request'> {
  const before = await snapshot();
  const exchange = await rawExchange(api.service.port, request.bytes, { timeoutMs: ANSWER_WITHIN_MS, head: request.head, halfClose: true });
  const after = await snapshot();
  const { response } = exchange;
  // Empty lines before a request line are ignored (RFC 9112 §2.2): with nothing else, there is no request to answer.
  if (!response && exchange.closed && exchange.bytes.length === 0 && /^[\r\n]*$/.test(request.bytes.toString('latin1'))) {
    assert.deepEqual(after, before);
    return 'no request';
  }
  assert.ok(response, exchange.closed ? `closed without an answer: ${JSON.stringify(exchange.bytes.toString('latin1'))}` : `no answer within ${ANSWER_WITHIN_MS} ms`);
  assert.ok(response.status < 500, `answered ${response.status}: ${response.body.toString('utf8')}`);
  if (response.status === 302) {
    // The addresses a person tries first lead to the reference page, with no body.
    assert.match(response.headers.location ?? '', /\/v1\/docs$/);
    assert.equal(response.body.length, 0);
    assert.deepEqual(after, before);
    return response.status;
  }
  assert.match(response.headers['content-type'] ?? '', /^application\/json\b/, `answered ${response.status} with Content-Type ${response.headers['content-type']}`);
  if (response.status >= 400 && !request.head) errorCodeOf(response);
  if (response.status === 201) {
    assert.ok(request.mayCreate, 'a request other than POST /v1/pets created something');
    assert.deepEqual(after, { ...before, events: before.events + 1, lastPosition: after.lastPosition, pets: before.pets + 1, petIdSequence: before.petIdSequence + 1, petsChecksum: after.petsChecksum });
    const pet = JSON.parse(response.body.toString('utf8')) as { id: number };
    assert.equal(pet.id, after.petIdSequence);
  } else if (response.status === 200 && request.changesPet !== undefined) {
    await checkStatusChange(request, response, before, after);
  } else {
    assert.deepEqual(after, before, `answered ${response.status} but the store changed`);
  }
  return response.status;
}

describe('HTTP fuzzing', () => {
  it(`answers ${RUNS} random requests with a 2xx or a 4xx Error in JSON, never a 5xx or a hang, and changes nothing when it refuses`, async (t) => {
    t.diagnostic(`seed ${SEED} (replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
    const statuses = new Map<number | 'no request', number>();
    const statusChanges = new Map<number | 'no request', number>();
    await fc.assert(
      fc.asyncProperty(wireRequest({ validKey: TEST_API_KEY, existingPets: { min: 1, max: EXISTING_PETS } }), async (request) => {
        try {
          const status = await checkOneRequest(request);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (request.changesPet !== undefined) statusChanges.set(status, (statusChanges.get(status) ?? 0) + 1);
        } catch (error) {
          throw new Error(`${(error as Error).message}\n  request: ${request.description}`, { cause: error });
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    // How often each status came, so a reader can see the cases reached every layer.
    const tally = (counts: Map<number | 'no request', number>) => JSON.stringify(Object.fromEntries([...counts].sort(([a], [b]) => String(a).localeCompare(String(b)))));
    t.diagnostic(`statuses: ${tally(statuses)}; of PATCH /v1/pets/{digits}: ${tally(statusChanges)}`);
    assert.deepEqual((await verifyProjection((await api.database()).db)).problems, []);
  });
});
