import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { TEST_API_KEY } from '../support/test-service.ts';

/**
 * Tracing off costs nothing: the service as `npm start` runs it loads neither the OpenTelemetry
 * packages nor its own tracing code unless tracing is configured. Node-only: the modules a process
 * resolves are recorded by loader hooks (tests/support/record-module-loads.mjs), which Deno lacks.
 */

const RECORDER = fileURLToPath(new URL('../support/record-module-loads.mjs', import.meta.url));

/** Starts the service with `environment`, creates and lists a pet, stops it; answers the URLs of the modules it resolved. */
async function modulesResolvedBy(environment: Record<string, string>): Promise<string[]> {
  const cwd = mkdtempSync(join(tmpdir(), 'petstore-modules-'));
  const record = join(cwd, 'modules.txt');
  const service = startServiceProcess(
    { PETSTORE_API_KEYS: TEST_API_KEY, ...environment, NODE_OPTIONS: `--import=${RECORDER}`, RECORD_MODULE_LOADS: record },
    { cwd },
  );
  try {
    const baseUrl = await service.listening;
    const headers = { authorization: `Bearer ${TEST_API_KEY}`, 'content-type': 'application/json' };
    assert.equal((await fetch(`${baseUrl}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'Loaded', categoryId: 1 }) })).status, 201);
    assert.equal((await fetch(`${baseUrl}/pets`, { headers })).status, 200);
    service.signal('SIGTERM');
    assert.equal((await service.exited).code, 0, service.stderr());
    return readFileSync(record, 'utf8').split('\n').filter(Boolean);
  } finally {
    service.cleanup();
    rmSync(cwd, { recursive: true, force: true });
  }
}

const openTelemetry = (urls: string[]) => urls.filter((url) => url.includes('/node_modules/@opentelemetry/'));
const tracingCode = (urls: string[]) => urls.filter((url) => /\/(tracing|traced-[a-z]+|spans)(-[A-Z0-9]+)?\.(ts|js)$/.test(url));

describe('the OpenTelemetry SDK is loaded only when tracing is configured', () => {
  it('tracing off: no @opentelemetry module, none of the tracing code', async () => {
    const urls = await modulesResolvedBy({});
    assert.ok(urls.some((url) => url.includes('/node_modules/koa/')), 'the recorder saw the service load its packages');
    assert.deepEqual(openTelemetry(urls), []);
    assert.deepEqual(tracingCode(urls), []);
  });

  it('tracing on: the SDK and the one exporter asked for are loaded', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const urls = await modulesResolvedBy({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      const loaded = openTelemetry(urls).join('\n');
      assert.match(loaded, /@opentelemetry\/sdk-trace-base\//);
      assert.match(loaded, /@opentelemetry\/exporter-trace-otlp-http\//);
      assert.doesNotMatch(loaded, /@opentelemetry\/exporter-trace-otlp-proto\//);
      assert.notDeepEqual(tracingCode(urls), [], 'the tracing code is recognised where it is loaded');
      assert.ok(receiver.spans.some((span) => span.name === 'POST /v1/pets'), 'the service exported its spans before it stopped');
    } finally {
      await receiver.close();
    }
  });
});
