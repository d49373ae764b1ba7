import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { closedBy, openConnection, parseResponse } from '../support/raw-http.ts';
import { TEST_API_KEY, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** A stream's slot, and its connection's, are freed the moment its client closes it. */

const STREAM = `GET /v1/events HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n\r\n`;
const CLIENT = '127.0.0.2';
const OTHER = '127.0.0.3';

/** Opens a stream from `from` on a raw connection and resolves with the connection once the stream's head has arrived, or with the status when it was refused. */
async function openStream(port: number, from: string): Promise<{ socket: Socket; status: number }> {
  const socket = await openConnection(port, from);
  socket.on('error', () => {});
  return new Promise((resolve, reject) => {
    let bytes = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      const headEnd = bytes.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(bytes.toString('latin1'))?.[1]);
      // A refused stream has a complete Error body; read it to the end so the connection is done with.
      if (status !== 200) assert.ok(parseResponse(bytes) ?? true);
      resolve({ socket, status });
    };
    const onClose = () => reject(new Error(`closed after ${bytes.length} bytes, before a stream's head`));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(STREAM);
  });
}

describe('event streams closed by their client', () => {
  let api: TestService;
  const sockets: Socket[] = [];

  before(async () => {
    api = await startTestService({
      PETSTORE_EVENT_STREAMS_MAX: '4',
      PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '4',
      // Far longer than closedBy waits: a stream closed in time was closed because its client closed it.
      PETSTORE_EVENT_STREAM_HEARTBEAT_MS: '60000',
    });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await api.stop();
  });

  it('ends a stream at once when its client closes its side cleanly, freeing its stream and connection slots', async () => {
    const port = api.service.port;
    const streams = [];
    for (let index = 0; index < 4; index++) streams.push(await openStream(port, CLIENT));
    sockets.push(...streams.map(({ socket }) => socket));
    assert.deepEqual(streams.map(({ status }) => status), [200, 200, 200, 200]);
    // Every slot is taken: one more stream, from anyone, is refused.
    const refused = await openStream(port, OTHER);
    sockets.push(refused.socket);
    assert.equal(refused.status, 503);
    refused.socket.destroy();
    // The client closes each stream the clean way (a FIN, not a reset): the server closes its side too.
    await Promise.all(streams.map(({ socket }) => {
      const closed = closedBy(socket, 5_000);
      socket.end();
      return closed;
    }));
    // The client's connection slots and the stream slots are free again.
    const again = [];
    for (let index = 0; index < 4; index++) again.push(await openStream(port, CLIENT));
    sockets.push(...again.map(({ socket }) => socket));
    assert.deepEqual(again.map(({ status }) => status), [200, 200, 200, 200]);
    for (const { socket } of again) socket.destroy();
  });
});
