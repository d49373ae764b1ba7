import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { openEventStream } from '../support/event-stream-reader.ts';
import type { EventStreamReader } from '../support/event-stream-reader.ts';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

const auth = { authorization: `Bearer ${TEST_API_KEY}` };

describe('GET /v1/events as Server-Sent Events', () => {
  let api: TestService;
  const streams: EventStreamReader[] = [];
  const open = async (query = '', headers: Record<string, string> = {}) => {
    const stream = await openEventStream(`${api.origin}/v1/events${query}`, { ...auth, ...headers });
    streams.push(stream);
    return stream;
  };
  /** Streams the client closed are let go by the server a moment later: until then a new one may be refused. */
  const openAdmitted = async () => {
    for (;;) {
      const attempt = await open();
      if (attempt.response.status === 200) return attempt;
      assert.equal(attempt.response.status, 503);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const create = async (name: string) => {
    const response = await api.createPet({ name, categoryId: 1 });
    assert.equal(response.status, 201);
    return ((await response.json()) as { id: number }).id;
  };

  before(async () => {
    api = await startTestService({ PETSTORE_EVENT_STREAM_HEARTBEAT_MS: '200', PETSTORE_EVENT_STREAMS_MAX: '3' });
    for (let index = 0; index < 3; index++) await create(`early ${index}`);
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await api.stop();
  });

  it('says retry: first, catches up from the log, then sends each new commit as it happens', async () => {
    const stream = await open();
    assert.equal(stream.response.status, 200);
    assert.match(stream.response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal((await stream.next()).retry, '2000');
    const caughtUp = [await stream.nextEvent(), await stream.nextEvent(), await stream.nextEvent()];
    assert.deepEqual(caughtUp.map((message) => message.id), ['1', '2', '3']);
    const [first] = caughtUp;
    assert.equal(first!.event, undefined);
    const event = JSON.parse(first!.data) as { id: string; type: string; source: string };
    assert.deepEqual([event.id, event.type, event.source], ['1', CLOUD_EVENT_TYPES.PetAdded, api.baseUrl]);
    const feed = (await (await api.request('/v1/events')).json()) as unknown[];
    assert.deepEqual(caughtUp.map((message) => JSON.parse(message.data)), feed);
    const id = await create('live');
    const live = await stream.nextEvent();
    assert.equal(live.id, '4');
    assert.equal(JSON.parse(live.data).subject, `pets/${id}`);
    stream.close();
  });

  it('resumes exactly after Last-Event-ID (which outranks after), with no gap and no duplicate', async () => {
    const first = await open();
    await first.next();
    const seen: string[] = [];
    seen.push((await first.nextEvent()).id, (await first.nextEvent()).id);
    first.close();
    const during = await create('while away');
    const resumed = await open('?after=0', { 'last-event-id': seen.at(-1)! });
    await resumed.next();
    for (;;) {
      const message = await resumed.nextEvent();
      seen.push(message.id);
      if (JSON.parse(message.data).subject === `pets/${during}`) break;
    }
    const log = ((await (await api.request('/v1/events')).json()) as { id: string }[]).map((event) => event.id);
    assert.deepEqual(seen, log);
    resumed.close();
  });

  it('filters by type and petId, live as well', async () => {
    const id = await create('watched');
    const stream = await open(`?type=${CLOUD_EVENT_TYPES.PetStatusChanged}&petId=${id}`);
    await stream.next();
    await create('not watched');
    const response = await api.request(`/v1/pets/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"status":"sold"}' });
    assert.equal(response.status, 200);
    const message = JSON.parse((await stream.nextEvent()).data) as { type: string; subject: string };
    assert.deepEqual([message.type, message.subject], [CLOUD_EVENT_TYPES.PetStatusChanged, `pets/${id}`]);
    stream.close();
  });

  it('sends a comment line when it has been silent for the heartbeat interval', async () => {
    const stream = await open('?after=100000');
    assert.ok((await stream.next()).retry);
    assert.deepEqual(await stream.next(), { comment: '' });
    stream.close();
  });

  it('answers HEAD with the JSON page\'s headers, holding no stream open', async () => {
    const response = await fetch(`${api.origin}/v1/events`, { method: 'HEAD', headers: { ...auth, accept: 'text/event-stream' } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('refuses a bad Last-Event-ID with 400 invalid_header, and bad parameters with 400 invalid_query', async () => {
    const badHeader = await fetch(`${api.origin}/v1/events`, { headers: { ...auth, accept: 'text/event-stream', 'last-event-id': 'abc' } });
    assert.equal(badHeader.status, 400);
    assert.equal((await readError(badHeader)).code, 'invalid_header');
    const badQuery = await fetch(`${api.origin}/v1/events?type=x`, { headers: { ...auth, accept: 'text/event-stream' } });
    assert.equal(badQuery.status, 400);
    assert.equal((await readError(badQuery)).code, 'invalid_query');
  });

  it('refuses a stream past the cap with 503, Retry-After and the Error body, and admits one again once a stream ends', async () => {
    const held = [await openAdmitted(), await openAdmitted(), await openAdmitted()];
    const refused = await fetch(`${api.origin}/v1/events`, { headers: { ...auth, accept: 'text/event-stream' } });
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal((await readError(refused)).code, 'unavailable');
    assert.equal((await api.request('/v1/events')).status, 200, 'the JSON answer is not capped');
    held[0]!.close();
    const admitted = await openAdmitted();
    for (const stream of [...held, admitted]) stream.close();
  });
});

describe('an event stream at shutdown', () => {
  it('ends cleanly when the service closes, without waiting for the grace period', { timeout: 20_000 }, async () => {
    const api = await startTestService({ PETSTORE_SHUTDOWN_GRACE_MS: '600000' });
    const stream = await openEventStream(`${api.origin}/v1/events`, auth);
    await stream.next();
    const ended = stream.ended();
    await api.stop();
    await ended;
  });
});
