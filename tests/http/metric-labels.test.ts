import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rawExchange } from '../support/raw-http.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** No request, however made up, adds a series to /metrics: every label comes from a fixed set. */

let api: TestService;

before(async () => {
  api = await startTestService();
});

after(async () => {
  await api.stop();
});

/** The request-duration series of /v1/pets, where every request here goes. */
async function requestSeries(): Promise<string[]> {
  const text = await (await api.request('/metrics', { key: null })).text();
  return text.split('\n').filter((line) => line.startsWith('petstore_http_request_duration_seconds_count{') && line.includes('route="/v1/pets"'));
}

describe('metric labels', () => {
  it('labels every method outside HTTP\'s usual ones "other", so that made-up methods add no series', async () => {
    // Tokens Node's parser refuses (answered by the server) and ones it knows but no route takes (answered by the app).
    const methods = [...Array.from({ length: 200 }, (_, index) => `M${String(index).padStart(7, '0')}X`), 'PROPFIND', 'MKCOL', 'PURGE'];
    for (const method of methods) {
      const { response } = await rawExchange(api.service.port, `${method} /v1/pets HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`);
      assert.ok(response && response.status >= 400 && response.status < 500, `${method}: ${response?.status}`);
    }
    const series = await requestSeries();
    assert.deepEqual(series.filter((line) => /M\d{7}X|PROPFIND|MKCOL|PURGE/.test(line)), []);
    const other = series.filter((line) => line.includes('method="other"'));
    assert.ok(other.length >= 1 && other.length <= 2, `made-up methods spread over ${other.length} series: ${other.join('\n')}`);
    const seriesBefore = series.length;
    for (let index = 200; index < 300; index++) {
      await rawExchange(api.service.port, `M${String(index).padStart(7, '0')}X /v1/pets HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`);
    }
    assert.equal((await requestSeries()).length, seriesBefore, 'a hundred more made-up methods added series');
  });

  it('keeps the usual methods as their own label', async () => {
    assert.equal((await api.request('/v1/pets', { method: 'DELETE' })).status, 405);
    assert.ok((await requestSeries()).some((line) => line.includes('method="DELETE",route="/v1/pets",status="405"')));
  });
});
