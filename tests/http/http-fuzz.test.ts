import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { errorCodeOf, rawExchange } from '../support/raw-http.ts';
import { wireRequest } from '../support/request-arbitraries.ts';
import type { WireRequest } from '../support/request-arbitraries.ts';
import { verifyProjection } from '../support/projection-check.ts';
import { seedFrom } from '../support/seeded-random.ts';
import { snapshotStore } from '../support/store-snapshot.ts';
import { TEST_API_KEY, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/**
 * Property-based tests over the real HTTP server, with requests written byte by byte: random methods,
 * paths, query strings, headers and bodies (any JSON, deep nesting, huge strings, numbers past 2^53,
 * `__proto__` and `constructor` keys, bytes that are not JSON), and bytes that are not HTTP at all.
 * FUZZ_RUNS sets the number of cases (1,000 in `npm test`, 10,000 in `npm run test:fuzz`);
 * FUZZ_SEED replays a run.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = seedFrom('FUZZ_SEED');
// Far above any answer's time on a loaded machine, far below a hang.
const ANSWER_WITHIN_MS = 5000;

let api: TestService;

before(async () => {
  api = await startTestService();
});
after(async () => {
  await api.stop();
});

/** Everything that must hold for one request, whatever it was. */
async function checkOneRequest(request: WireRequest): Promise<number | 'no request'> {
  const before = await snapshotStore(api.service.store.db);
  const exchange = await rawExchange(api.service.port, request.bytes, { timeoutMs: ANSWER_WITHIN_MS, head: request.head, halfClose: true });
  const after = await snapshotStore(api.service.store.db);
  const { response } = exchange;
  // Empty lines before a request line are ignored (RFC 9112 §2.2): with nothing else, there is no request to answer.
  if (!response && exchange.closed && exchange.bytes.length === 0 && /^[\r\n]*$/.test(request.bytes.toString('latin1'))) {
    assert.deepEqual(after, before);
    return 'no request';
  }
  assert.ok(response, exchange.closed ? `closed without an answer: ${JSON.stringify(exchange.bytes.toString('latin1'))}` : `no answer within ${ANSWER_WITHIN_MS} ms`);
  assert.ok(response.status < 500, `answered ${response.status}: ${response.body.toString('utf8')}`);
  assert.match(response.headers['content-type'] ?? '', /^application\/json\b/, `answered ${response.status} with Content-Type ${response.headers['content-type']}`);
  if (response.status >= 400 && !request.head) errorCodeOf(response);
  if (response.status === 201) {
    assert.ok(request.mayCreate, 'a request other than POST /v1/pets created something');
    assert.deepEqual(after, { ...before, events: before.events + 1, lastPosition: after.lastPosition, pets: before.pets + 1, petIdSequence: before.petIdSequence + 1 });
    const pet = JSON.parse(response.body.toString('utf8')) as { id: number };
    assert.equal(pet.id, after.petIdSequence);
  } else {
    assert.deepEqual(after, before, `answered ${response.status} but the store changed`);
  }
  return response.status;
}

describe('HTTP fuzzing', () => {
  it(`answers ${RUNS} random requests with a 2xx or a 4xx Error in JSON, never a 5xx or a hang, and changes nothing when it refuses`, async (t) => {
    t.diagnostic(`seed ${SEED} (replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
    const statuses = new Map<number | 'no request', number>();
    await fc.assert(
      fc.asyncProperty(wireRequest({ validKey: TEST_API_KEY }), async (request) => {
        try {
          const status = await checkOneRequest(request);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        } catch (error) {
          throw new Error(`${(error as Error).message}\n  request: ${request.description}`, { cause: error });
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    // How often each status came, so a reader can see the cases reached every layer.
    t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => String(a).localeCompare(String(b)))))}`);
    assert.deepEqual((await verifyProjection(api.service.store.db)).problems, []);
  });
});
