import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { exchangeOn, openConnection, rawExchange } from '../support/raw-http.ts';
import { TEST_API_KEY, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** One client (one IP address) cannot take the service from the others. */

const LIST = `GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n`;
const GREEDY_SILENT = '127.0.0.2';
const OTHER = '127.0.0.3';
const GREEDY_KEEP_ALIVE = '127.0.0.4';

/** A connection, watched from the moment it opens. */
interface Held {
  readonly socket: Socket;
  /** Resolves, with how many bytes the server sent, when the server closes the connection. */
  readonly closed: Promise<number>;
  isOpen(): boolean;
}

function watch(socket: Socket): Held {
  let open = true;
  let received = 0;
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => (received += chunk.length));
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(received))).finally(() => (open = false));
  return { socket, closed, isOpen: () => open };
}

/** Opens `count` connections from `from`, `batch` at a time (so the listen backlog never overflows). */
async function openMany(port: number, from: string, count: number, batch = 100): Promise<Held[]> {
  const held: Held[] = [];
  for (let start = 0; start < count; start += batch) {
    held.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - start) }, () => openConnection(port, from).then(watch)))));
  }
  return held;
}

/** Fails the test, rather than hang it, when a connection is still open after `timeoutMs`. */
function closedWithin<T>(closed: Promise<T>, timeoutMs = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the server left a connection open for ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([closed, late]).finally(() => clearTimeout(timer));
}

/** Sends one listing on each connection and keeps it open: how many got an answer, and how many were closed instead. */
async function keepAliveOn(connections: readonly Held[]): Promise<{ answered: number; closed: number }> {
  const outcomes = await Promise.all(
    connections.map(({ socket, isOpen }) => {
      if (!isOpen()) return 'closed';
      return exchangeOn(socket, `${LIST}\r\n`).then(
        (response) => (response.status === 200 ? 'answered' : `answered ${response.status}`),
        () => 'closed',
      );
    }),
  );
  assert.deepEqual(outcomes.filter((outcome) => outcome !== 'answered' && outcome !== 'closed'), []);
  return { answered: outcomes.filter((outcome) => outcome === 'answered').length, closed: outcomes.filter((outcome) => outcome === 'closed').length };
}

/** A listing from `from` on a fresh connection: its status, or undefined when the connection was closed unanswered. */
async function listFrom(port: number, from: string): Promise<number | undefined> {
  return (await rawExchange(port, `${LIST}Connection: close\r\n\r\n`, { from })).response?.status;
}

describe('a cap on the connections of each client address', () => {
  let api: TestService;
  const held: Held[] = [];

  before(async () => {
    api = await startTestService({
      PETSTORE_MAX_CONNECTIONS: '64',
      PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '8',
      // Long enough that nothing here is closed for being slow or idle: only the caps act.
      PETSTORE_HEADERS_TIMEOUT_MS: '60000',
      PETSTORE_REQUEST_TIMEOUT_MS: '60000',
      PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '60000',
    });
  });
  after(async () => {
    for (const { socket } of held) socket.destroy();
    await api.stop();
  });

  it('closes a silent client\'s connections past its cap at once, unanswered, and serves another client', async () => {
    const port = api.service.port;
    const silent = await openMany(port, GREEDY_SILENT, 20, 1);
    held.push(...silent);
    const refused = await Promise.all(silent.slice(8).map(({ closed }) => closedWithin(closed)));
    assert.deepEqual(refused, Array(12).fill(0), 'a connection past the cap got an answer');
    assert.equal(await listFrom(port, OTHER), 200);
    // The first eight were kept, and are served once they speak.
    for (const { socket } of silent.slice(0, 8)) assert.equal((await exchangeOn(socket, `${LIST}\r\n`)).status, 200);
  });

  it('keeps at most the cap of one client\'s idle kept-alive connections, and serves another client', async () => {
    const port = api.service.port;
    const keptAlive = await openMany(port, GREEDY_KEEP_ALIVE, 20, 1);
    held.push(...keptAlive);
    assert.deepEqual(await keepAliveOn(keptAlive), { answered: 8, closed: 12 });
    assert.equal(await listFrom(port, OTHER), 200);
  });

  it('accepts a client again once one of its connections ends', async () => {
    const port = api.service.port;
    assert.equal(await listFrom(port, GREEDY_SILENT), undefined, 'a ninth connection from the greedy client was served');
    const released = held[0]!;
    released.socket.end();
    await closedWithin(released.closed);
    // The server notices the closed connection a moment later: try until a new one is served.
    let served: number | undefined;
    for (let attempt = 0; attempt < 50 && served === undefined; attempt++) served = await listFrom(port, GREEDY_SILENT);
    assert.equal(served, 200);
  });
});

describe('under pressure, connections waiting without a request are closed sooner', () => {
  let api: TestService;
  const held: Held[] = [];

  before(async () => {
    api = await startTestService({
      // Pressure starts past three quarters of 40: 30 connections.
      PETSTORE_MAX_CONNECTIONS: '40',
      PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '16',
      PETSTORE_WAITING_TIMEOUT_UNDER_PRESSURE_MS: '500',
      // Far longer than closedBy waits: a connection closed in time was closed by the pressure rule.
      PETSTORE_HEADERS_TIMEOUT_MS: '60000',
      PETSTORE_REQUEST_TIMEOUT_MS: '60000',
      PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '60000',
    });
  });
  after(async () => {
    for (const { socket } of held) socket.destroy();
    await api.stop();
  });

  it('leaves silent and idle kept-alive connections alone up to the pressure mark', async () => {
    const port = api.service.port;
    held.push(...(await openMany(port, GREEDY_SILENT, 16)));
    const keptAlive = await openMany(port, GREEDY_KEEP_ALIVE, 14);
    held.push(...keptAlive);
    assert.deepEqual(await keepAliveOn(keptAlive), { answered: 14, closed: 0 });
    // 30 connections, the mark itself: well past the waiting timeout, every one is still held.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal(held.filter(({ isOpen }) => !isOpen()).length, 0);
  });

  it('closes every connection that waited past the timeout once one more arrives, and serves another client', async () => {
    const port = api.service.port;
    const arriving = await openMany(port, OTHER, 1);
    // The silent and the idle kept-alive connections have waited longer than the timeout under pressure;
    // they are closed long before the header and keep-alive timeouts.
    const waited = [...held];
    held.push(...arriving);
    await Promise.all(waited.map(({ closed }) => closedWithin(closed)));
    assert.equal(await listFrom(port, OTHER), 200);
    assert.deepEqual(await keepAliveOn(arriving), { answered: 1, closed: 0 });
  });
});

describe('at the default limits', () => {
  let api: TestService;
  const held: Held[] = [];

  before(async () => {
    api = await startTestService();
  });
  after(async () => {
    for (const { socket } of held) socket.destroy();
    await api.stop();
  });

  it('answers a third client normally while one holds 1,000 silent sockets and another 2,000 idle kept-alive ones', async () => {
    const port = api.service.port;
    held.push(...(await openMany(port, GREEDY_SILENT, 1_000)));
    const keptAlive = await openMany(port, GREEDY_KEEP_ALIVE, 2_000);
    held.push(...keptAlive);
    const { answered } = await keepAliveOn(keptAlive);
    assert.equal(answered, 256, 'the kept-alive client got more (or fewer) connections than its cap');
    for (let request = 0; request < 20; request++) assert.equal(await listFrom(port, OTHER), 200, `request ${request} of the third client`);
  });
});
