import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { closedBy, errorCodeOf, exchangeOn, openConnection, parseResponse, rawExchange } from '../support/raw-http.ts';
import { TEST_API_KEY, readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** What protects the process from slow, oversized, malformed and too many clients. */

const LIST = `GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n`;

describe('limits on slow, large and malformed requests', () => {
  let api: TestService;
  let port: number;

  before(async () => {
    api = await startTestService({
      PETSTORE_HEADERS_TIMEOUT_MS: '1000',
      PETSTORE_REQUEST_TIMEOUT_MS: '1500',
      PETSTORE_MAX_HEADER_BYTES: '4096',
    });
    port = api.service.port;
  });
  after(async () => {
    await api.stop();
  });

  /** Sends `first`, then one more byte of `trickle` every 50 ms until the server closes the connection. */
  function trickle(first: string, trickled: string): { closed: Promise<Buffer>; isOpen: () => boolean } {
    let open = true;
    const socketReady = openConnection(port);
    const closed = socketReady.then(async (socket) => {
      socket.write(first);
      let index = 0;
      const timer = setInterval(() => socket.write(trickled[index++ % trickled.length]!), 50);
      try {
        return await closedBy(socket);
      } finally {
        clearInterval(timer);
        open = false;
      }
    });
    return { closed, isOpen: () => open };
  }

  it('cuts off a client that trickles its headers (408 in the Error shape) while serving others', async () => {
    const slow = Array.from({ length: 10 }, () => trickle('GET /v1/pets HTTP/1.1\r\nHost: test\r\nX-Slow: ', 'abcdef'));
    const servedWhileSlowWereOpen: boolean[] = [];
    for (let index = 0; index < 10; index++) {
      const response = await api.request('/v1/pets');
      assert.equal(response.status, 200);
      await response.body?.cancel();
      servedWhileSlowWereOpen.push(slow.every((client) => client.isOpen()));
    }
    assert.ok(servedWhileSlowWereOpen[0], 'the first listing waited for the slow clients to be cut off');
    for (const client of slow) {
      const answer = parseResponse(await client.closed);
      assert.ok(answer, 'the slow client was closed without an answer');
      assert.equal(answer.status, 408);
      assert.equal(errorCodeOf(answer), 'request_timeout');
    }
  });

  it('cuts off a client that trickles its body (408) and stores nothing from it', async () => {
    const before = await api.request('/v1/pets?limit=100').then((response) => response.json());
    const body = JSON.stringify({ name: 'Slow', categoryId: 1 });
    const client = trickle(
      `POST /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 1000}\r\n\r\n`,
      ' ',
    );
    const answer = parseResponse(await client.closed);
    assert.ok(answer);
    assert.equal(answer.status, 408);
    assert.equal(errorCodeOf(answer), 'request_timeout');
    assert.deepEqual(await api.request('/v1/pets?limit=100').then((response) => response.json()), before);
  });

  it('closes a connection that never sends a request', async () => {
    const socket = await openConnection(port);
    const bytes = await closedBy(socket);
    if (bytes.length > 0) assert.equal(parseResponse(bytes)?.status, 408);
  });

  it('answers headers over the configured size with 431 headers_too_large', async () => {
    const exchange = await rawExchange(port, `${LIST}X-Big: ${'a'.repeat(5000)}\r\n\r\n`);
    assert.ok(exchange.response);
    assert.equal(exchange.response.status, 431);
    assert.equal(errorCodeOf(exchange.response), 'headers_too_large');
    assert.ok(exchange.closed);
  });

  it('answers a body over 64 KiB with 413 payload_too_large and stores nothing', async () => {
    const before = await api.request('/v1/pets?limit=100').then((response) => response.json());
    const response = await api.createPet({ name: 'x'.repeat(70 * 1024), categoryId: 1 });
    assert.equal(response.status, 413);
    assert.equal((await readError(response)).code, 'payload_too_large');
    assert.deepEqual(await api.request('/v1/pets?limit=100').then((listing) => listing.json()), before);
  });

  it('answers a gzipped body that inflates past 64 KiB with 413 and then the request pipelined behind it', async () => {
    // Incompressible: the compressed body is much larger than what the service reads before refusing it.
    const inflated = `{"name":"x","categoryId":1,"padding":"${randomBytes(1024 * 1024).toString('base64')}"}`;
    const compressed = gzipSync(inflated);
    const head = 'POST /v1/pets HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n'
      + `Authorization: Bearer ${TEST_API_KEY}\r\nContent-Length: ${compressed.length}\r\n\r\n`;
    const exchange = await rawExchange(port, Buffer.concat([Buffer.from(head), compressed, Buffer.from(`${LIST}\r\n`)]), { halfClose: true, timeoutMs: 5_000 });
    const first = exchange.response;
    assert.equal(first?.status, 413, `no 413, only ${JSON.stringify(exchange.bytes.toString('latin1').slice(0, 200))}`);
    assert.equal(errorCodeOf(first), 'payload_too_large');
    const rest = exchange.bytes.subarray(exchange.bytes.indexOf('HTTP/1.1 413') + 1);
    const second = parseResponse(rest.subarray(rest.indexOf('HTTP/1.1 ')));
    assert.equal(second?.status, 200, 'the request pipelined behind the 413 was not answered');
    assert.ok(exchange.closed, 'the connection stalled instead of closing after the half-close');
  });

  const malformed: Array<[string, string | Buffer]> = [
    ['a method that is not a token', 'G@T /v1/pets HTTP/1.1\r\nHost: test\r\n\r\n'],
    ['a header name with a space', `${LIST}Bad Header: x\r\n\r\n`],
    ['a header line without a colon', `${LIST}NoColon\r\n\r\n`],
    ['a NUL in a header value', `${LIST}X-A: a\u0000b\r\n\r\n`],
    ['an unknown HTTP version', 'GET /v1/pets HTTP/7.1\r\nHost: test\r\n\r\n'],
    ['both Content-Length and Transfer-Encoding', `POST /v1/pets HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`],
    ['a Content-Length that is not a number', `POST /v1/pets HTTP/1.1\r\nHost: test\r\nContent-Length: two\r\n\r\n{}`],
    ['bytes that are not HTTP', Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a])],
    ['a CONNECT request', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
    ['an HTTP/1.1 request without Host', `GET /v1/pets HTTP/1.1\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n\r\n`],
    ['two Host headers', `${LIST}Host: other\r\n\r\n`],
  ];
  // A well-formed method token Node does not know (BREW) is not malformed: it gets 405 with Allow on a
  // known path, as tests/http/decisions.test.ts checks.
  for (const [what, request] of malformed) {
    it(`answers ${what} with 400 invalid_header in JSON, not a bare close`, async () => {
      const exchange = await rawExchange(port, request);
      assert.ok(exchange.response, `no answer, only ${JSON.stringify(exchange.bytes.toString('latin1'))}`);
      assert.equal(exchange.response.status, 400);
      assert.equal(errorCodeOf(exchange.response), 'invalid_header');
      assert.ok(exchange.closed, 'the connection stayed open after a malformed request');
    });
  }

  it('serves a request whose Expect it does not know instead of a bare 417', async () => {
    const exchange = await rawExchange(port, `${LIST}Expect: tea\r\nConnection: close\r\n\r\n`);
    assert.equal(exchange.response?.status, 200);
    assert.ok(Array.isArray(JSON.parse(exchange.response.body.toString('utf8'))));
  });

  it('serves an HTTP/1.0 request without Host', async () => {
    const exchange = await rawExchange(port, `GET /v1/pets HTTP/1.0\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n\r\n`);
    assert.equal(exchange.response?.status, 200);
  });
});

describe('maximum connections', () => {
  let api: TestService;
  const sockets: Socket[] = [];

  before(async () => {
    api = await startTestService({ PETSTORE_MAX_CONNECTIONS: '4' });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await api.stop();
  });

  it('closes connections past the maximum at once and accepts again when one ends', async () => {
    for (let index = 0; index < 4; index++) {
      const socket = await openConnection(api.service.port);
      sockets.push(socket);
      // An answer proves the server counts the connection.
      assert.equal((await exchangeOn(socket, `${LIST}\r\n`)).status, 200);
    }
    const refused = await rawExchange(api.service.port, `${LIST}Connection: close\r\n\r\n`);
    assert.ok(refused.closed);
    assert.equal(refused.bytes.length, 0, 'a connection past the maximum got an answer');
    // The kept connections are still served.
    assert.equal((await exchangeOn(sockets[0]!, `${LIST}\r\n`)).status, 200);

    const released = sockets.pop()!;
    const gone = closedBy(released);
    released.end();
    await gone;
    // The server notices the closed connection a moment later: try until a new one is served.
    let served: number | undefined;
    for (let attempt = 0; attempt < 50 && served === undefined; attempt++) {
      served = (await rawExchange(api.service.port, `${LIST}Connection: close\r\n\r\n`)).response?.status;
    }
    assert.equal(served, 200);
  });
});
