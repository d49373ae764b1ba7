import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { readError, startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

interface CloudEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: string;
  data: Record<string, unknown>;
}

const ADDED = CLOUD_EVENT_TYPES.PetAdded;
const CHANGED = CLOUD_EVENT_TYPES.PetStatusChanged;

describe('GET /v1/events and /v1/pets/{petId}/events: the log as CloudEvents JSON', () => {
  let api: TestService;
  const pets: number[] = [];

  before(async () => {
    api = await startTestService();
    for (let index = 0; index < 5; index++) {
      const response = await api.createPet({ name: `pet ${index}`, categoryId: 1 });
      pets.push(((await response.json()) as { id: number }).id);
    }
    for (const id of [pets[1], pets[3]]) {
      const response = await api.request(`/v1/pets/${id}`, {
        method: 'PATCH', headers: { 'content-type': 'application/json', 'x-request-id': 'secret-request-id' }, body: '{"status":"pending"}',
      });
      assert.equal(response.status, 200);
    }
  });
  after(() => api.stop());

  const events = async (path: string): Promise<{ response: Response; events: CloudEvent[] }> => {
    const response = await api.request(path);
    assert.equal(response.status, 200, await response.clone().text());
    return { response, events: (await response.json()) as CloudEvent[] };
  };

  /** Follows rel="next" from `path` to the end. */
  async function walk(path: string): Promise<{ events: CloudEvent[]; pages: number }> {
    const seen: CloudEvent[] = [];
    let pages = 0;
    let next: string | undefined = path;
    while (next) {
      const page = await events(next);
      pages++;
      seen.push(...page.events);
      const link = page.response.headers.get('link');
      const url = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
      if (link) assert.ok(url?.startsWith(`${api.baseUrl}/events?`), `a next link on this service: ${link}`);
      next = url?.slice(api.origin.length);
    }
    return { events: seen, pages };
  }

  it('answers the whole log in position order, each event in CloudEvents 1.0 form with nothing of who caused it', async () => {
    const { response, events: log } = await events('/v1/events');
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(response.headers.get('link'), null);
    assert.deepEqual(log.map((event) => event.id), ['1', '2', '3', '4', '5', '6', '7']);
    assert.deepEqual(log.map((event) => event.type), [ADDED, ADDED, ADDED, ADDED, ADDED, CHANGED, CHANGED]);
    assert.deepEqual(log[5], {
      specversion: '1.0',
      id: '6',
      source: api.baseUrl,
      type: CHANGED,
      subject: `pets/${pets[1]}`,
      time: log[5]!.time,
      datacontenttype: 'application/json',
      data: { id: pets[1], from: null, to: 'pending' },
    });
    assert.deepEqual(log[0]!.data, { id: pets[0], name: 'pet 0', categoryId: 1, status: null });
    assert.ok(!Number.isNaN(Date.parse(log[0]!.time)));
    const text = JSON.stringify(log);
    for (const secret of [TEST_API_KEY, 'secret-request-id', 'apiKeyId', 'requestId', 'traceId', 'schemaVersion']) assert.ok(!text.includes(secret), secret);
  });

  it('pages with after and limit, linking the next page while more exist, the pages adding up to the log', async () => {
    const whole = await events('/v1/events');
    const paged = await walk('/v1/events?limit=2');
    assert.equal(paged.pages, 4);
    assert.deepEqual(paged.events, whole.events);
    const { response, events: rest } = await events('/v1/events?after=5&limit=2');
    assert.deepEqual(rest.map((event) => event.id), ['6', '7']);
    assert.equal(response.headers.get('link'), null);
    assert.deepEqual((await events('/v1/events?after=7')).events, []);
    assert.deepEqual((await events('/v1/events?after=900000')).events, []);
  });

  it('filters by type (repeated or a comma list) and by petId, keeping the filters in the next link', async () => {
    assert.deepEqual((await events(`/v1/events?type=${CHANGED}`)).events.map((event) => event.subject), [`pets/${pets[1]}`, `pets/${pets[3]}`]);
    const both = (await events(`/v1/events?type=${ADDED},${CHANGED}`)).events;
    assert.equal(both.length, 7);
    assert.deepEqual((await events(`/v1/events?type=${ADDED}&type=${CHANGED}`)).events, both);
    assert.deepEqual((await events(`/v1/events?petId=${pets[3]}`)).events.map((event) => [event.type, event.subject]), [
      [ADDED, `pets/${pets[3]}`], [CHANGED, `pets/${pets[3]}`],
    ]);
    const filtered = await events(`/v1/events?type=${ADDED}&limit=2`);
    const link = filtered.response.headers.get('link') ?? '';
    const next = new URL(/^<([^>]+)>/.exec(link)![1]!);
    assert.deepEqual(Object.fromEntries(next.searchParams), { after: filtered.events[1]!.id, limit: '2', type: ADDED });
    const walked = await walk(`/v1/events?type=${ADDED}&limit=2`);
    assert.deepEqual(walked.events.map((event) => event.subject), pets.map((id) => `pets/${id}`));
  });

  for (const query of [
    'limit=0', 'limit=1001', 'limit=01', 'limit=x', 'after=-1', 'after=1.5', 'after=1e3', 'after=1&after=2', 'type=PetAdded', 'type=',
    `type=${ADDED},nope`, 'petId=0', 'petId=abc', 'petId=1&petId=2',
  ]) {
    it(`refuses ${query} with 400 invalid_query`, async () => {
      const response = await api.request(`/v1/events?${query}`);
      assert.equal(response.status, 400);
      assert.equal((await readError(response)).code, 'invalid_query');
    });
  }

  it('requires an API key', async () => {
    const response = await api.request('/v1/events', { key: null });
    assert.equal(response.status, 401);
    assert.equal((await api.request(`/v1/pets/${pets[0]}/events`, { key: null })).status, 401);
  });

  it("answers one pet's history oldest first, the same objects as the feed", async () => {
    const history = await events(`/v1/pets/${pets[1]}/events`);
    const feed = (await events(`/v1/events?petId=${pets[1]}`)).events;
    assert.deepEqual(history.events, feed);
    assert.deepEqual(history.events.map((event) => event.type), [ADDED, CHANGED]);
    assert.match(history.response.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('answers 404 for a pet that does not exist and 400 for a path that cannot name one', async () => {
    for (const id of ['999999', '0', '007']) {
      const response = await api.request(`/v1/pets/${id}/events`);
      assert.equal(response.status, 404, id);
      assert.equal((await readError(response)).code, 'not_found');
    }
    const response = await api.request('/v1/pets/abc/events');
    assert.equal(response.status, 400);
    assert.equal((await readError(response)).code, 'invalid_path');
  });

  it('checks Last-Event-ID on a JSON page too: 400 invalid_header for a bad one, and a good one leaves the page to `after`', async () => {
    const refused = await api.request('/v1/events', { headers: { 'last-event-id': 'abc' } });
    assert.equal(refused.status, 400);
    assert.equal((await readError(refused)).code, 'invalid_header');
    const page = await api.request('/v1/events?after=1&limit=1', { headers: { 'last-event-id': '4' } });
    assert.equal(page.status, 200);
    assert.deepEqual(((await page.json()) as CloudEvent[]).map((event) => event.id), ['2']);
  });

  it('answers 405 with Allow for another method', async () => {
    const response = await api.request('/v1/events', { method: 'POST' });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'HEAD, GET');
  });
});
