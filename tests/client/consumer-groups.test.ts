import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPetStoreClient } from '../../client/index.ts';
import type { CloudEvent, PetStoreClient } from '../../client/index.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

describe('the client\'s consumer group calls', () => {
  let api: TestService;
  let client: PetStoreClient;
  before(async () => {
    api = await startTestService();
    client = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
  });
  after(() => api.stop());

  it('claim, extend, nack and ack move an event through its group', async () => {
    await client.createConsumerGroup('calls', { start: 'end', ackTimeoutMs: 5000 });
    const pet = await client.createPet({ name: 'Claimed', categoryId: 1 });
    const [claim] = await client.claim('calls', 'worker');
    assert.equal(claim!.event.subject, `pets/${pet.id}`);
    assert.deepEqual((await client.extend('calls', [claim!.lease])).stale, []);
    assert.deepEqual(await client.nack('calls', [claim!.lease]), { nacked: 1, stale: [] });
    const [again] = await client.claim('calls', 'worker');
    assert.equal(again!.deliveries, 2);
    assert.deepEqual(await client.ack('calls', [again!.lease]), { acked: 1, stale: [] });
    const state = await client.consumerGroup('calls');
    assert.equal(state.checkpoint, state.head);
  });

  it('consume acks each event its handler returned from and nacks one it threw on, which comes back', async () => {
    await client.createConsumerGroup('consumed', { start: 'end' });
    const ids: number[] = [];
    for (let index = 0; index < 5; index++) ids.push((await client.createPet({ name: `Consumed ${index}`, categoryId: 1 })).id);
    const seen: CloudEvent[] = [];
    let failed = false;
    const stop = new AbortController();
    await client.consume('consumed', (event) => {
      if (!failed && event.subject === `pets/${ids[2]}`) {
        failed = true;
        throw new Error('not this time');
      }
      seen.push(event);
      if (seen.length === 5) stop.abort();
    }, { retryAfterMs: 0, waitMs: 1000, signal: stop.signal });
    assert.deepEqual(seen.map((event) => Number(event.subject.slice('pets/'.length))).sort((a, b) => a - b), ids);
    const state = await client.consumerGroup('consumed');
    assert.deepEqual([state.checkpoint, state.inFlight], [state.head, 0]);
  });

  it('consume stops between events when aborted: the rest of the batch goes back untried to another worker at once', async () => {
    await client.createConsumerGroup('stopped', { start: 'end' });
    for (let index = 0; index < 10; index++) await client.createPet({ name: `Stopped ${index}`, categoryId: 1 });
    const stop = new AbortController();
    let handled = 0;
    await client.consume('stopped', () => {
      handled += 1;
      stop.abort();
    }, { max: 10, waitMs: 1000, signal: stop.signal });
    assert.equal(handled, 1, 'the handler ran once: the loop stopped after the event it was handling');
    const rest = await client.claim('stopped', 'next');
    assert.equal(rest.length, 9, 'the other nine are handed out at once');
    assert.deepEqual(new Set(rest.map((claim) => claim.deliveries)), new Set([1]), 'untried: their delivery was not counted');
  });

  it('consume acks a batch with its next claim: one request a batch, and what is left is acked when it stops', async () => {
    await client.createConsumerGroup('batched', { start: 'end' });
    for (let index = 0; index < 10; index++) await client.createPet({ name: `Batch ${index}`, categoryId: 1 });
    const requests: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      requests.push(`${input instanceof Request ? input.method : init?.method ?? 'GET'} ${new URL(input instanceof Request ? input.url : String(input)).pathname}`);
      return realFetch(input, init);
    };
    const stop = new AbortController();
    let seen = 0;
    try {
      await client.consume('batched', () => {
        seen += 1;
        if (seen === 10) stop.abort();
      }, { max: 5, waitMs: 1000, signal: stop.signal });
    } finally {
      globalThis.fetch = realFetch;
    }
    const path = '/v1/consumer-groups/batched';
    assert.deepEqual(requests, [`POST ${path}/claims`, `POST ${path}/claims`, `POST ${path}/acks`], 'two claims, the second carrying the first batch\'s acks, and the last batch acked on stopping');
    const state = await client.consumerGroup('batched');
    assert.deepEqual([state.checkpoint, state.inFlight], [state.head, 0]);
  });
});

