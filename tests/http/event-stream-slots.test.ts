import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { closedBy, openConnection, rawExchange } from '../support/raw-http.ts';
import { TEST_API_KEY, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/**
 * A stream's slot, and its connection's, are freed the moment its client closes it; streams leave room
 * for other clients, and give way under connection pressure as other waiting connections do.
 */

const STREAM = `GET /v1/events HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n\r\n`;
const CLIENT = '127.0.0.2';
const OTHER = '127.0.0.3';
const LIST = `GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nConnection: close\r\n\r\n`;

/**
 * Opens a stream from `from` on a raw connection and resolves with the connection once the stream's
 * head has arrived, with the status of a refusal, or with status 0 when the server closed the connection unanswered.
 */
async function openStream(port: number, from: string): Promise<{ socket: Socket; status: number }> {
  const socket = await openConnection(port, from);
  socket.on('error', () => {});
  return new Promise((resolve) => {
    let bytes = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      const headEnd = bytes.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(bytes.toString('latin1'))?.[1]);
      resolve({ socket, status });
    };
    const onClose = () => resolve({ socket, status: 0 });
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
      PETSTORE_EVENT_STREAMS_MAX_PER_CLIENT: '4',
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

/** Opens `count` streams from each of `addresses`, `batch` at a time; closes the refused ones at once and returns the admitted. */
async function openStreams(port: number, addresses: readonly string[], count: number, batch = 50): Promise<{ admitted: Socket[]; refused: number[] }> {
  const admitted: Socket[] = [];
  const refused: number[] = [];
  for (const address of addresses) {
    for (let start = 0; start < count; start += batch) {
      const opened = await Promise.all(Array.from({ length: Math.min(batch, count - start) }, () => openStream(port, address)));
      for (const { socket, status } of opened) {
        if (status === 200) admitted.push(socket);
        else {
          refused.push(status);
          socket.destroy();
        }
      }
    }
  }
  return { admitted, refused };
}

/** Opens a connection from `from` and sends a POST's head and the first bytes of a body that never finishes. */
async function slowBody(port: number, from: string): Promise<Socket> {
  const socket = await openConnection(port, from);
  socket.on('error', () => {});
  socket.write(`POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`);
  return socket;
}

async function listFrom(port: number, from: string): Promise<number | undefined> {
  return (await rawExchange(port, LIST, { from, timeoutMs: 5_000 })).response?.status;
}

describe('event streams and the connection caps', () => {
  let api: TestService;
  const sockets: Socket[] = [];

  before(async () => {
    api = await startTestService({
      // Pressure starts past three quarters of 40: 30 connections. Streams may take half: 20.
      PETSTORE_MAX_CONNECTIONS: '40',
      PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '16',
      PETSTORE_WAITING_TIMEOUT_UNDER_PRESSURE_MS: '500',
      PETSTORE_EVENT_STREAM_HEARTBEAT_MS: '60000',
      PETSTORE_HEADERS_TIMEOUT_MS: '60000',
      PETSTORE_REQUEST_TIMEOUT_MS: '60000',
      PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '60000',
    });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await api.stop();
  });

  it('admits a client\'s streams up to half its connection cap by default, refusing more with 429', async () => {
    const port = api.service.port;
    const { admitted, refused } = await openStreams(port, ['127.0.0.2'], 12);
    assert.equal(admitted.length, 8);
    assert.deepEqual(refused, [429, 429, 429, 429]);
    for (const socket of admitted) socket.destroy();
  });

  it('admits streams up to half the connection cap by default, refusing more with 503, so other clients still get in', async () => {
    const port = api.service.port;
    let streams = await openStreams(port, ['127.0.0.2', '127.0.0.4', '127.0.0.5'], 8);
    // The last test's streams are let go a moment after their connections close: wait for their slots.
    for (let attempt = 0; attempt < 50 && streams.admitted.length < 20; attempt++) {
      for (const socket of streams.admitted) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 20));
      streams = await openStreams(port, ['127.0.0.2', '127.0.0.4', '127.0.0.5'], 8);
    }
    const { admitted, refused } = streams;
    sockets.push(...admitted);
    assert.equal(admitted.length, 20);
    assert.deepEqual(new Set(refused), new Set([503]));
    for (let request = 0; request < 5; request++) assert.equal(await listFrom(port, OTHER), 200, `request ${request} of another client`);
    for (const socket of admitted) socket.destroy();
  });

  it('closes streams, like idle connections, once they have waited past the timeout under pressure, and serves another client', async () => {
    const port = api.service.port;
    // Wait for the last test's streams to be let go.
    let streams = await openStreams(port, ['127.0.0.2', '127.0.0.4', '127.0.0.6'], 8);
    for (let attempt = 0; attempt < 50 && streams.admitted.length < 20; attempt++) {
      for (const socket of streams.admitted) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 20));
      streams = await openStreams(port, ['127.0.0.2', '127.0.0.4', '127.0.0.6'], 8);
    }
    sockets.push(...streams.admitted);
    assert.equal(streams.admitted.length, 20);
    const closings = streams.admitted.map((socket) => closedBy(socket, 10_000));
    // Twelve bodies that never finish take the server past the pressure mark (32 of 40 connections):
    // streams that have waited past the timeout are closed until it is under the mark again.
    for (let index = 0; index < 12; index++) sockets.push(await slowBody(port, '127.0.0.5'));
    await Promise.any(closings);
    assert.equal(await listFrom(port, OTHER), 200);
  });
});

describe('event streams at the default limits', () => {
  let api: TestService;
  const sockets: Socket[] = [];

  before(async () => {
    api = await startTestService();
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await api.stop();
  });

  it('answers another client normally while four addresses ask for 1,000 streams and a fifth sends 40 bodies that never finish', async () => {
    const port = api.service.port;
    const { admitted, refused } = await openStreams(port, ['127.0.0.2', '127.0.0.4', '127.0.0.5', '127.0.0.6'], 250);
    sockets.push(...admitted);
    assert.equal(admitted.length, 512, 'streams may take half of the 1,024 connections, and each client half of its 256');
    assert.deepEqual(refused.filter((status) => status !== 429 && status !== 503), []);
    for (let index = 0; index < 40; index++) sockets.push(await slowBody(port, '127.0.0.7'));
    for (let request = 0; request < 20; request++) assert.equal(await listFrom(port, OTHER), 200, `request ${request} of another client`);
  });
});
