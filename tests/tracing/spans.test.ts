import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPetStoreClient } from 'petstore/client';
import type { Pet } from 'petstore/client';
import type { StoredEvent } from '../../application/index.ts';
import { SPAN_KIND, startOtlpReceiver } from '../support/otlp-receiver.ts';
import type { OtlpReceiver, ReceivedSpan } from '../support/otlp-receiver.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** The spans a traced service exports for each kind of request, read back from an OTLP receiver. */

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const UNSAMPLED_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

function childrenOf(spans: readonly ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId);
}

/** The one child of `parent` named `name`. */
function child(spans: readonly ReceivedSpan[], parent: ReceivedSpan, name: string): ReceivedSpan {
  const found = childrenOf(spans, parent).filter((span) => span.name === name);
  assert.equal(found.length, 1, `${parent.name} should have one child ${name}; it has ${childrenOf(spans, parent).map((span) => span.name).join(', ') || 'none'}`);
  return found[0]!;
}

/** The server span of the request that was answered with this X-Request-Id. */
function serverSpan(spans: readonly ReceivedSpan[], requestId: string): ReceivedSpan {
  const found = spans.filter((span) => span.kind === SPAN_KIND.server && span.attributes['petstore.request.id'] === requestId);
  assert.equal(found.length, 1, `one server span for request ${requestId}, found ${found.length}`);
  return found[0]!;
}

/** The spans' names, sorted. */
function names(spans: readonly ReceivedSpan[]): string[] {
  return spans.map((span) => span.name).sort();
}

describe('traces of a service exporting over OTLP/JSON', () => {
  let receiver: OtlpReceiver;
  let api: TestService;
  let spans: ReceivedSpan[];
  let events: StoredEvent[];
  const requestIds: Record<string, string> = {};
  let created: Pet;

  before(async () => {
    receiver = await startOtlpReceiver();
    api = await startTestService({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace('/v1/traces', ''),
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'petstore-under-test',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=s3cret%20token',
    });
    const client = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
    created = await client.createPet({ name: 'Rex', categoryId: 1 }, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, idempotencyKey: 'create-1' });
    const send = async (label: string, path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('x-request-id', label);
      const response = await api.request(path, { ...init, headers });
      requestIds[label] = response.headers.get('x-request-id')!;
      return response;
    };
    await send('listing', '/v1/pets?limit=5');
    await send('cached-listing', '/v1/pets?limit=5');
    await send('change', `/v1/pets/${created.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'sold' }) });
    await send('lookup', `/v1/pets/${created.id}`);
    await send('missing', '/v1/pets/999999');
    const json = { 'content-type': 'application/json' };
    await send('unsampled', '/v1/pets', { method: 'POST', headers: { ...json, traceparent: `00-${UNSAMPLED_TRACE}-00f067aa0ba902b7-00` }, body: JSON.stringify({ name: 'Unseen', categoryId: 2 }) });
    await send('malformed', '/v1/pets', { method: 'POST', headers: { ...json, traceparent: '00-not-a-trace-01' }, body: JSON.stringify({ name: 'Fresh', categoryId: 3 }) });
    events = await api.service.store.eventLog.readLog({ after: 0, limit: 100 });
    // Closing exports what is still buffered.
    await api.stop();
    spans = receiver.spans;
  });
  after(async () => {
    await receiver.close();
  });

  it('continues the caller\'s traceparent: the create\'s server span is in its trace, under its span', () => {
    const server = spans.find((span) => span.kind === SPAN_KIND.server && span.traceId === CALLER_TRACE);
    assert.ok(server, 'a server span in the caller\'s trace');
    assert.equal(server.parentSpanId, CALLER_SPAN);
  });

  it('gives a create the tree POST /v1/pets > addPet > (SELECT idempotency_keys, create > commit), with the attributes of each', () => {
    const server = spans.find((span) => span.kind === SPAN_KIND.server && span.traceId === CALLER_TRACE)!;
    assert.equal(server.name, 'POST /v1/pets');
    assert.deepEqual(
      { method: server.attributes['http.request.method'], route: server.attributes['http.route'], status: server.attributes['http.response.status_code'] },
      { method: 'POST', route: '/v1/pets', status: 201 },
    );
    assert.equal(server.attributes['petstore.request.id'], events[0]!.metadata.requestId);
    assert.equal(server.statusCode, 0);

    const useCase = child(spans, server, 'addPet');
    assert.equal(useCase.kind, SPAN_KIND.internal);
    assert.equal(useCase.attributes['petstore.pet.id'], created.id);
    // The keyed create looked for a remembered answer first.
    assert.deepEqual(names(childrenOf(spans, useCase)), ['SELECT idempotency_keys', 'create']);
    const lookup = child(spans, useCase, 'SELECT idempotency_keys');
    assert.equal(lookup.kind, SPAN_KIND.client);
    assert.equal(lookup.attributes['db.response.returned_rows'], 0);
    const append = child(spans, useCase, 'create');
    assert.equal(append.attributes['petstore.pet.id'], created.id);
    assert.equal(append.kind, SPAN_KIND.internal);
    assert.deepEqual(
      {
        stream: append.attributes['petstore.stream.id'],
        expected: append.attributes['petstore.stream.expected_version'],
        version: append.attributes['petstore.stream.version'],
        types: append.attributes['petstore.event.types'],
        position: append.attributes['petstore.log.position'],
        group: append.attributes['petstore.commit.group_size'],
        system: append.attributes['db.system.name'],
      },
      { stream: `pet-${created.id}`, expected: 0, version: 1, types: ['PetAdded'], position: events[0]!.position, group: 1, system: 'sqlite' },
    );
    const commit = child(spans, append, 'commit');
    assert.equal(commit.attributes['petstore.commit.group_size'], 1);
    assert.deepEqual(childrenOf(spans, commit), []);
  });

  it('keeps the trace id that caused an event in the event\'s metadata', () => {
    const added = events.find((stored) => stored.streamId === `pet-${created.id}` && stored.event.type === 'PetAdded');
    assert.equal(added?.metadata.traceId, CALLER_TRACE);
    const changed = events.find((stored) => stored.event.type === 'PetStatusChanged');
    assert.equal(changed?.metadata.traceId, serverSpan(spans, requestIds.change!).traceId);
  });

  it('gives a listing read from the catalogue the tree GET /v1/pets > listPets > SELECT pets', () => {
    const server = serverSpan(spans, requestIds.listing!);
    assert.equal(server.name, 'GET /v1/pets');
    assert.equal(server.parentSpanId, undefined, 'a request without traceparent starts a trace');
    assert.equal(server.attributes['http.route'], '/v1/pets');
    assert.equal(server.attributes['http.response.status_code'], 200);
    const useCase = child(spans, server, 'listPets');
    assert.equal(useCase.attributes['petstore.listing.limit'], 5);
    const query = child(spans, useCase, 'SELECT pets');
    assert.equal(query.kind, SPAN_KIND.client);
    assert.deepEqual(
      [query.attributes['db.system.name'], query.attributes['db.collection.name'], query.attributes['db.operation.name'], query.attributes['db.response.returned_rows']],
      ['sqlite', 'pets', 'SELECT', 1],
    );
  });

  it('gives a cached listing, answered before Koa, a server span of its own', () => {
    const server = serverSpan(spans, requestIds['cached-listing']!);
    assert.equal(server.name, 'GET /v1/pets');
    assert.equal(server.attributes['http.route'], '/v1/pets');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.deepEqual(childrenOf(spans, server), [], 'answered from the cache: no use case ran');
  });

  it('gives a status change PATCH /v1/pets/:petId > changePetStatus > (SELECT events, append > commit)', () => {
    const server = serverSpan(spans, requestIds.change!);
    assert.equal(server.name, 'PATCH /v1/pets/:petId');
    assert.equal(server.attributes['url.path'], `/v1/pets/${created.id}`);
    const useCase = child(spans, server, 'changePetStatus');
    assert.deepEqual(names(childrenOf(spans, useCase)), ['SELECT events', 'append']);
    assert.equal(child(spans, useCase, 'SELECT events').attributes['petstore.stream.id'], `pet-${created.id}`);
    const append = child(spans, useCase, 'append');
    assert.deepEqual([append.attributes['petstore.stream.expected_version'], append.attributes['petstore.stream.version']], [1, 2]);
    child(spans, append, 'commit');
  });

  it('gives a lookup GET /v1/pets/:petId > getPet > SELECT pets', () => {
    const server = serverSpan(spans, requestIds.lookup!);
    assert.equal(server.name, 'GET /v1/pets/:petId');
    const query = child(spans, child(spans, server, 'getPet'), 'SELECT pets');
    assert.equal(query.attributes['petstore.pet.id'], created.id);
    assert.equal(query.attributes['db.response.returned_rows'], 1);
  });

  it('records a 404 as the caller\'s outcome on the server span and as the use case\'s failure', () => {
    const server = serverSpan(spans, requestIds.missing!);
    assert.equal(server.attributes['http.response.status_code'], 404);
    assert.equal(server.statusCode, 0, 'a 4xx is not the server\'s error');
    const useCase = child(spans, server, 'getPet');
    assert.equal(useCase.statusCode, 2);
    assert.equal(useCase.attributes['error.type'], 'PetNotFound');
  });

  it('follows a caller that did not sample: no span, and no trace id on the event', () => {
    assert.deepEqual(spans.filter((span) => span.traceId === UNSAMPLED_TRACE), []);
    const unseen = events.find((stored) => stored.event.type === 'PetAdded' && stored.event.data.name === 'Unseen');
    assert.ok(unseen);
    assert.equal(unseen.metadata.traceId, undefined);
    assert.equal(unseen.metadata.requestId, requestIds.unsampled);
  });

  it('starts a new trace when the traceparent is malformed', () => {
    const server = serverSpan(spans, requestIds.malformed!);
    assert.equal(server.parentSpanId, undefined);
    assert.equal(server.attributes['http.response.status_code'], 201);
    const fresh = events.find((stored) => stored.event.type === 'PetAdded' && stored.event.data.name === 'Fresh');
    assert.equal(fresh?.metadata.traceId, server.traceId);
  });

  it('exports to OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces as JSON, with the configured headers and service name', () => {
    assert.ok(receiver.requests.length > 0);
    for (const request of receiver.requests) {
      assert.match(request.contentType, /^application\/json/);
      assert.equal(request.headers['x-collector-token'], 's3cret token');
    }
    assert.ok(spans.every((span) => span.resource['service.name'] === 'petstore-under-test'));
  });
});

describe('traces over OTLP/protobuf, the default protocol', () => {
  let receiver: OtlpReceiver;
  let spans: ReceivedSpan[];

  before(async () => {
    receiver = await startOtlpReceiver();
    const api = await startTestService({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url });
    const response = await api.createPet({ name: 'Proto', categoryId: 1 });
    assert.equal(response.status, 201);
    await api.stop();
    spans = receiver.spans;
  });
  after(async () => {
    await receiver.close();
  });

  it('sends protobuf to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, the same tree inside', () => {
    assert.ok(receiver.requests.length > 0);
    assert.ok(receiver.requests.every((request) => request.contentType === 'application/x-protobuf'));
    const server = spans.find((span) => span.kind === SPAN_KIND.server && span.name === 'POST /v1/pets');
    assert.ok(server, `a server span POST /v1/pets among ${names(spans).join(', ')}`);
    assert.equal(server.attributes['http.response.status_code'], 201);
    const append = child(spans, child(spans, server, 'addPet'), 'create');
    assert.equal(append.attributes['petstore.stream.version'], 1);
    assert.equal(child(spans, append, 'commit').kind, SPAN_KIND.internal);
    assert.equal(server.resource['service.name'], 'petstore');
  });
});
