import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RECONNECT_MS } from '../../contract/event-feed.ts';
import { documentSchemas } from '../support/response-contract.ts';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

let api: TestService;

before(async () => {
  api = await startTestService();
});

after(async () => {
  await api.stop();
});

describe('GET /, /v1 and /v1/ (the addresses a person tries first)', () => {
  for (const path of ['/', '/v1', '/v1/']) {
    it(`redirects ${path} to the reference page on the public base, without a key`, async () => {
      const response = await api.request(path, { key: null, redirect: 'manual' });
      assert.equal(response.status, 302);
      assert.equal(response.headers.get('location'), `${api.baseUrl}/docs`);
      assert.equal(await response.text(), '', 'a redirect carries no body');
      const page = await api.request(path, { key: null });
      assert.equal(page.status, 200);
      assert.equal(page.url, `${api.baseUrl}/docs`);
      assert.match(await page.text(), /<html/i);
    });
  }

  it('answers another method on / with 405 and Allow', async () => {
    const response = await api.request('/', { key: null, method: 'POST' });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'HEAD, GET');
  });
});

describe('GET /v1/docs (the page itself is tested in a browser by npm run test:browser)', () => {
  it('serves an HTML page without a key that loads its files from beside it, not from a CDN', async () => {
    const response = await api.request('/v1/docs', { key: null });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    const html = await response.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.deepEqual(sources.sort(), ['docs/favicon-32x32.png', 'docs/reference-page.js', 'docs/swagger-ui-bundle.js', 'docs/swagger-ui.css']);
  });

  it('serves each of those files from the installed package, without a key', async () => {
    for (const [name, type] of [['swagger-ui.css', 'text/css'], ['swagger-ui-bundle.js', 'text/javascript'], ['reference-page.js', 'text/javascript'], ['favicon-32x32.png', 'image/png']]) {
      const response = await api.request(`/v1/docs/${name}`, { key: null });
      assert.equal(response.status, 200, name);
      assert.match(response.headers.get('content-type') ?? '', new RegExp(`^${type}`), name);
      assert.ok((await response.arrayBuffer()).byteLength > 0, name);
    }
    const script = await (await api.request('/v1/docs/reference-page.js', { key: null })).text();
    assert.match(script, /url: 'openapi\.json'/);
    assert.match(script, /plugins: \[StabilityBadges\]/, 'the badge that shows each operation\'s stability');
  });

  it('has, in the document it loads, the event stream answer of GET /events with its event schema and an example stream whose events are valid', async () => {
    const document = await (await api.request('/v1/openapi.json', { key: null })).json() as Record<string, any>;
    const stream = document.paths['/events'].get.responses[200].content['text/event-stream'];
    assert.equal(stream['x-itemSchema'].$ref, '#/components/schemas/CloudEvent');
    assert.equal(document.components.schemas.CloudEvent.additionalProperties, false);
    const example = stream.example as string;
    assert.ok(example.startsWith(`retry: ${RECONNECT_MS}\n\n`), example);
    const validate = documentSchemas(document).validatorAt('/components/schemas/CloudEvent');
    const messages = example.split('\n\n').slice(1, -1);
    assert.ok(messages.length >= 2, example);
    for (const message of messages) {
      const [, id, data] = /^id: (\d+)\ndata: (.+)$/.exec(message) ?? assert.fail(`not an SSE message with an id: ${message}`);
      const event = JSON.parse(data!) as { id: string };
      assert.ok(validate(event), `${data}: ${JSON.stringify(validate.errors)}`);
      assert.equal(event.id, id, 'the message id is the event id');
    }
  });

  it('answers 404 for any other file name, a path outside the package included', async () => {
    for (const path of ['/v1/docs/index.html', '/v1/docs/..%2Fpackage.json', '/v1/docs/', '/v1/docs/swagger-ui.css/x']) {
      const response = await api.request(path, { key: null });
      assert.equal(response.status, 404, path);
      assert.equal((await readError(response)).code, 'not_found');
    }
  });

  it('keeps the 405 rule: POST /v1/docs and POST /v1/openapi.json are 405 with Allow', async () => {
    for (const path of ['/v1/docs', '/v1/openapi.json']) {
      const response = await api.request(path, { method: 'POST', key: null });
      assert.equal(response.status, 405, path);
      assert.deepEqual(response.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD']);
    }
  });
});
