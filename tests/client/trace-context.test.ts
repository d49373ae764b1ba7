import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPetStoreClient } from 'petstore/client';
import type { PetStoreClient } from 'petstore/client';
import { SPAN_KIND, startOtlpReceiver } from '../support/otlp-receiver.ts';
import type { OtlpReceiver, ReceivedSpan } from '../support/otlp-receiver.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** The client passes the caller's trace context on, so that a traced service continues the caller's trace. */

const TRACE = '5b8efff798038103d269b633813fc60c';
const traceparent = (parent: string) => `00-${TRACE}-${parent}-01`;

describe('the client sends the caller\'s traceparent on every call', () => {
  let receiver: OtlpReceiver;
  let api: TestService;
  let client: PetStoreClient;
  let spans: ReceivedSpan[];
  let untraced: ReceivedSpan[];

  before(async () => {
    receiver = await startOtlpReceiver();
    api = await startTestService({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    client = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY, onDeprecation: () => undefined });
    const pet = await client.createPet({ name: 'Traced', categoryId: 1 }, { traceparent: traceparent('000000000000000a'), tracestate: 'vendor=1' });
    await client.listPets({ limit: 1 }, { traceparent: traceparent('000000000000000b') });
    const { etag } = await client.getPet(pet.id, { traceparent: traceparent('000000000000000c') });
    await client.changePetStatus(pet.id, 'sold', { ifMatch: etag, traceparent: traceparent('000000000000000d') });
    await client.createPet({ name: 'Second', categoryId: 1 });
    for await (const _ of client.pets({ limit: 1 }, { traceparent: traceparent('000000000000000e') })) {
      // Two pets, one a page: two requests.
    }
    await api.stop();
    spans = receiver.spans.filter((span) => span.kind === SPAN_KIND.server && span.traceId === TRACE);
    untraced = receiver.spans.filter((span) => span.kind === SPAN_KIND.server && span.traceId !== TRACE && span.name === 'POST /v1/pets');
  });
  after(async () => {
    await receiver.close();
  });

  it('createPet, listPets, getPet and changePetStatus each continue the trace under the span given', () => {
    const byParent = (parent: string) => spans.filter((span) => span.parentSpanId === parent).map((span) => span.name);
    assert.deepEqual(byParent('000000000000000a'), ['POST /v1/pets']);
    assert.deepEqual(byParent('000000000000000b'), ['GET /v1/pets']);
    assert.deepEqual(byParent('000000000000000c'), ['GET /v1/pets/:petId']);
    assert.deepEqual(byParent('000000000000000d'), ['PATCH /v1/pets/:petId']);
  });

  it('sends tracestate along when given', () => {
    assert.equal(spans.find((span) => span.parentSpanId === '000000000000000a')?.traceState, 'vendor=1');
    assert.equal(spans.find((span) => span.parentSpanId === '000000000000000b')?.traceState, undefined);
  });

  it('pets() sends it with every page', () => {
    assert.equal(spans.filter((span) => span.parentSpanId === '000000000000000e').length, 2, 'two pages of one pet each');
  });

  it('sends nothing when not given one: the service starts a trace of its own', () => {
    assert.equal(untraced.length, 1);
    assert.equal(untraced[0]!.parentSpanId, undefined);
  });

  it('refuses a malformed traceparent with a TypeError before anything is sent', async () => {
    const offline = createPetStoreClient({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: TEST_API_KEY });
    for (const bad of ['not-a-traceparent', `00-${TRACE.toUpperCase()}-000000000000000a-01`, `00-${TRACE}-0a-01`]) {
      await assert.rejects(offline.listPets({}, { traceparent: bad }), TypeError);
      await assert.rejects(offline.createPet({ name: 'x', categoryId: 1 }, { traceparent: bad }), TypeError);
    }
  });
});
