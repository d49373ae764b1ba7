import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closedBy, openConnection } from '../support/raw-http.ts';
import { TEST_API_KEY, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

const STREAM = `GET /v1/events HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n\r\n`;

describe('bytes Node cannot parse on a connection whose answer has begun', () => {
  let api: TestService;
  before(async () => {
    api = await startTestService({ PETSTORE_EVENT_STREAM_HEARTBEAT_MS: '60000' });
  });
  after(() => api.stop());

  it('closes the connection without writing an Error answer into the answer under way', async () => {
    const socket = await openConnection(api.service.port, '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.write(STREAM);
    for (let waited = 0; !received.includes('\r\n\r\n') && waited < 100; waited++) await new Promise((done) => setTimeout(done, 50));
    assert.match(received, /^HTTP\/1\.1 200 /);
    const closed = closedBy(socket, 5_000);
    socket.write('GARBAGE\r\n\r\n');
    await closed;
    const afterHead = received.slice(received.indexOf('\r\n\r\n') + 4);
    assert.doesNotMatch(afterHead, /HTTP\/1\.1 400/);
  });
});
