import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPetStoreClient, PetStoreAbortError, PetStoreError, PetStoreNetworkError, PetStoreTimeoutError,
} from 'petstore/client';
import type { DeprecationNotice, PetStoreClient, PetStoreClientOptions } from 'petstore/client';
import { startFaultProxy } from '../support/fault-proxy.ts';
import type { Fault, FaultProxy } from '../support/fault-proxy.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/**
 * The client through a proxy in front of the real service that loses answers, stalls, or answers 503
 * by itself: what retries, what does not, and that a retried creation adds exactly one pet.
 */

let api: TestService;
let proxy: FaultProxy;

before(async () => {
  api = await startTestService();
});
after(() => api.stop());
beforeEach(async () => {
  proxy = await startFaultProxy(api.origin);
});
afterEach(() => proxy.stop());

// Tiny waits: the tests count attempts, not milliseconds.
function clientThroughProxy(options: Partial<PetStoreClientOptions> = {}): PetStoreClient {
  return createPetStoreClient({ baseUrl: proxy.baseUrl, apiKey: TEST_API_KEY, retry: { initialDelayMs: 1, maxDelayMs: 5 }, ...options });
}

/** A 503 as the service words it, answered by the proxy. */
function unavailable(requestId: string, retryAfterSeconds = 0): Fault {
  const body = JSON.stringify({ code: 'unavailable', message: 'the database is busy; try again', status: 503 });
  const headers = { 'content-type': 'application/json', 'retry-after': String(retryAfterSeconds), 'x-request-id': requestId };
  return { kind: 'answer', status: 503, headers, body };
}

async function thrown(call: Promise<unknown>): Promise<unknown> {
  return call.then(() => assert.fail('the call succeeded'), (error: unknown) => error);
}

/** Every pet the service holds with this name, asked directly. */
async function petsNamed(name: string): Promise<{ id: number; name: string }[]> {
  const pets = (await (await api.request('/v1/pets?limit=100')).json()) as { id: number; name: string }[];
  return pets.filter((pet) => pet.name === name);
}

function idempotencyKeys(): (string | null)[] {
  return proxy.seen.map((request) => request.headers.get('idempotency-key'));
}

describe('createPet retries under one Idempotency-Key', () => {
  it('adds exactly one pet when the answer to the committed first attempt is lost', async () => {
    proxy.plan({ kind: 'drop-after-commit' });
    const pet = await clientThroughProxy().createPet({ name: 'Lost answer', categoryId: 1 });
    assert.equal(proxy.seen.length, 2, 'tried twice');
    const [first, second] = idempotencyKeys();
    assert.ok(first && first === second, 'the same key both times');
    assert.deepEqual(await petsNamed('Lost answer'), [pet]);
  });

  it('adds exactly one pet when an attempt timed out and the service committed it after the client left', async () => {
    proxy.plan({ kind: 'forward-after-client-left' });
    const pet = await clientThroughProxy({ timeoutMs: 1000 }).createPet({ name: 'Late commit', categoryId: 1 });
    // Every attempt, the late one included, has reached the service (on a slow machine a retry may time out too).
    await proxy.settled(proxy.seen.length);
    assert.ok(proxy.seen.length >= 2);
    assert.equal(new Set(idempotencyKeys()).size, 1);
    assert.deepEqual(await petsNamed('Late commit'), [pet]);
  });

  it('retries 503 and sends the key the caller gave on every attempt', async () => {
    proxy.plan(unavailable('proxy-1'), unavailable('proxy-2'));
    const pet = await clientThroughProxy().createPet({ name: 'After 503', categoryId: 1 }, { idempotencyKey: 'order-503' });
    assert.deepEqual(idempotencyKeys(), ['order-503', 'order-503', 'order-503']);
    assert.deepEqual(await petsNamed('After 503'), [pet]);
  });

  it('gives up after the configured attempts with the last 503 as a PetStoreError', async () => {
    proxy.plan(unavailable('proxy-1'), unavailable('proxy-2'), unavailable('proxy-3'), unavailable('proxy-4'));
    const error = await thrown(clientThroughProxy({ retry: { attempts: 3, initialDelayMs: 1, maxDelayMs: 5 } }).createPet({ name: 'Never', categoryId: 1 }));
    assert.ok(error instanceof PetStoreError);
    assert.deepEqual([error.code, error.status, error.requestId, error.retryAfterMs], ['unavailable', 503, 'proxy-3', 0]);
    assert.equal(proxy.seen.length, 3);
    assert.deepEqual(await petsNamed('Never'), []);
  });

  it('gives up on a connection that keeps failing with a PetStoreNetworkError carrying the cause', async () => {
    proxy.plan({ kind: 'drop' }, { kind: 'drop' });
    const error = await thrown(clientThroughProxy({ retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 5 } }).createPet({ name: 'Unreachable', categoryId: 1 }));
    assert.ok(error instanceof PetStoreNetworkError, String(error));
    assert.ok(error.cause instanceof Error);
    assert.match(error.message, /^POST http:\/\/127\.0\.0\.1:\d+\/v1\/pets got no answer/);
    assert.equal(proxy.seen.length, 2);
    assert.deepEqual(await petsNamed('Unreachable'), []);
  });

  it('does not retry an answer that is final (400)', async () => {
    const error = await thrown(clientThroughProxy().createPet({ name: '', categoryId: 1 }));
    assert.ok(error instanceof PetStoreError && error.code === 'invalid_body');
    assert.equal(proxy.seen.length, 1);
  });

  it('with retry attempts 1, tries once', async () => {
    proxy.plan(unavailable('proxy-1'));
    await thrown(clientThroughProxy({ retry: { attempts: 1 } }).createPet({ name: 'Once only', categoryId: 1 }));
    assert.equal(proxy.seen.length, 1);
  });
});

describe('what else retries, and what does not', () => {
  it('listPets and getPet retry 503 and lost connections', async () => {
    const pet = await createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY }).createPet({ name: 'Read twice', categoryId: 1 });
    proxy.plan(unavailable('proxy-1'), { kind: 'drop' });
    const client = clientThroughProxy({ onDeprecation: () => undefined });
    assert.ok((await client.listPets()).some((each) => each.id === pet.id));
    assert.deepEqual((await client.getPet(pet.id)).pet, pet);
    assert.deepEqual(proxy.seen.map((request) => request.method), ['GET', 'GET', 'GET', 'GET']);
  });

  it('changePetStatus is never retried: a lost answer is the caller\'s to judge', async () => {
    const pet = await createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY }).createPet({ name: 'Changed once', categoryId: 1 });
    proxy.plan(unavailable('proxy-1'));
    const error = await thrown(clientThroughProxy().changePetStatus(pet.id, 'sold'));
    assert.ok(error instanceof PetStoreError && error.status === 503);
    proxy.plan({ kind: 'drop-after-commit' });
    assert.ok((await thrown(clientThroughProxy().changePetStatus(pet.id, 'sold'))) instanceof PetStoreNetworkError);
    assert.equal(proxy.seen.length, 2);
  });
});

describe('timeouts and cancellation', () => {
  it('ends an attempt with no answer after timeoutMs with a PetStoreTimeoutError', async () => {
    proxy.plan({ kind: 'hang' });
    const error = await thrown(clientThroughProxy({ timeoutMs: 100, retry: { attempts: 1 } }).listPets());
    assert.ok(error instanceof PetStoreTimeoutError, String(error));
    assert.equal(error.timeoutMs, 100);
  });

  it('ends a call at once when the caller aborts it in flight, with the reason as cause', async () => {
    proxy.plan({ kind: 'hang' });
    const controller = new AbortController();
    const call = thrown(clientThroughProxy().listPets({}, { signal: controller.signal }));
    await proxy.received(1);
    const reason = new Error('the user left the page');
    controller.abort(reason);
    const error = await call;
    assert.ok(error instanceof PetStoreAbortError, String(error));
    assert.equal(error.cause, reason);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const error = await thrown(clientThroughProxy().createPet({ name: 'Never sent', categoryId: 1 }, { signal: AbortSignal.abort() }));
    assert.ok(error instanceof PetStoreAbortError);
    assert.equal(proxy.seen.length, 0);
  });

  it('ends the wait between retries when the caller aborts', async () => {
    // Retry-After: 60 makes the client wait a minute before its second attempt.
    proxy.plan(unavailable('proxy-1', 60));
    const controller = new AbortController();
    const call = thrown(clientThroughProxy({ retry: { maxDelayMs: 60_000 } }).createPet({ name: 'Waiting', categoryId: 1 }, { signal: controller.signal }));
    await proxy.settled(1);
    controller.abort();
    assert.ok((await call) instanceof PetStoreAbortError);
    assert.equal(proxy.seen.length, 1);
  });
});

describe('answers that are not the service\'s', () => {
  it('turns a gateway\'s HTML page into PetStoreError unexpected_response, not retried', async () => {
    proxy.plan({ kind: 'answer', status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad Gateway</h1>' });
    const error = await thrown(clientThroughProxy().createPet({ name: 'Gateway', categoryId: 1 }));
    assert.ok(error instanceof PetStoreError);
    assert.deepEqual([error.code, error.status, error.requestId], ['unexpected_response', 502, undefined]);
    assert.match(error.message, /Bad Gateway/);
    assert.equal(proxy.seen.length, 1);
  });

  it('turns a 200 that is not JSON into PetStoreError unexpected_response', async () => {
    proxy.plan({ kind: 'answer', status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' });
    const error = await thrown(clientThroughProxy().listPets());
    assert.ok(error instanceof PetStoreError);
    assert.deepEqual([error.code, error.status], ['unexpected_response', 200]);
  });
});

describe('headers the client reads rather than assumes', () => {
  it('takes the deprecation dates and successor from the answer', async () => {
    const pet = await createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY }).createPet({ name: 'Dated', categoryId: 1 });
    proxy.plan({
      kind: 'forward-with-headers',
      headers: { deprecation: '@1800000000', sunset: 'Sun, 01 Jun 2031 00:00:00 GMT', link: '</v2/pets>; rel="successor-version"' },
    });
    const notices: DeprecationNotice[] = [];
    await clientThroughProxy({ onDeprecation: (notice) => notices.push(notice) }).getPet(pet.id);
    assert.equal(notices.length, 1);
    assert.deepEqual(
      [notices[0]!.deprecatedAt?.toISOString(), notices[0]!.sunsetAt?.toISOString(), notices[0]!.successor],
      ['2027-01-15T08:00:00.000Z', '2031-06-01T00:00:00.000Z', new URL('/v2/pets', proxy.baseUrl).href],
    );
  });

  it('keeps paging on its own base when the next link names another origin, so the key goes nowhere else', async () => {
    const direct = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
    for (let index = 0; index < 12; index++) await direct.createPet({ name: `paged ${index}`, categoryId: 1, status: 'pending' });
    const expected = (await direct.listPets({ status: 'pending', limit: 100 })).map((pet) => pet.id);
    const walked: number[] = [];
    for await (const pet of clientThroughProxy().pets({ status: 'pending', limit: 5 })) walked.push(pet.id);
    assert.deepEqual(walked, expected);
    assert.equal(proxy.seen.length, Math.ceil(expected.length / 5), 'every page through the proxy');
    assert.ok(proxy.seen.slice(1).every((request) => /^\/v1\/pets\?limit=5&status=pending&after=\d+$/.test(request.path)), JSON.stringify(proxy.seen.map((request) => request.path)));
  });
});
