import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { clientAddressKey } from '../../adapters/http/guards/client-address.ts';
import { limitClients } from '../../adapters/http/server/client-limits.ts';
import { limitKeyFailures } from '../../adapters/http/guards/rate-limit.ts';
import { HttpProblem } from '../../adapters/http/pipeline/errors.ts';
import { DEFAULT_LIMITS } from '../../adapters/config/config.ts';
import type { IncomingMessage } from 'node:http';
import { closedBy, exchangeOn, parseResponse } from '../support/raw-http.ts';
import type { RawResponse } from '../support/raw-http.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** Every per-address limit counts a client by one key: an IPv4 address, or an IPv6 /64. */

describe('the key a client address is counted by', () => {
  it('is an IPv4 address itself, mapped into IPv6 or not', () => {
    assert.equal(clientAddressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(clientAddressKey('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(clientAddressKey('::ffff:cb00:7107'), '203.0.113.7');
  });

  it('is the /64 of an IPv6 address, however the address is written', () => {
    const key = clientAddressKey('2001:db8:0:1::1');
    assert.equal(key, '2001:db8:0:1::/64');
    for (const address of ['2001:db8:0:1:ffff:ffff:ffff:ffff', '2001:0db8:0000:0001:0:0:0:2', '2001:DB8::1:a:b:c:d', '2001:db8:0:1::5%eth0']) {
      assert.equal(clientAddressKey(address), key, address);
    }
    assert.notEqual(clientAddressKey('2001:db8:0:2::1'), key);
    assert.equal(clientAddressKey('::1'), '0:0:0:0::/64');
  });
});

/** A socket as the connection limits see it. */
function fakeSocket(remoteAddress: string): Socket & { destroyed: boolean } {
  const socket = new EventEmitter() as Socket & { destroyed: boolean };
  Object.assign(socket, { remoteAddress, destroyed: false, destroy: () => (socket.destroyed = true) });
  return socket;
}

describe('per-address limits on IPv6 clients', () => {
  it('caps the connections of one /64, whichever of its addresses they come from', () => {
    const server = new EventEmitter() as Server;
    limitClients(server, { ...DEFAULT_LIMITS, maxConnectionsPerClient: 3 });
    const sameClient = ['2001:db8:0:1::1', '2001:db8:0:1::2', '2001:db8:0:1::3', '2001:db8:0:1::4'].map(fakeSocket);
    for (const socket of sameClient) server.emit('connection', socket);
    assert.deepEqual(sameClient.map((socket) => socket.destroyed), [false, false, false, true]);
    const neighbour = fakeSocket('2001:db8:0:2::1');
    server.emit('connection', neighbour);
    assert.equal(neighbour.destroyed, false, 'another /64 is another client');
    server.emit('close');
  });

  it('counts requests without a valid key per /64, so new addresses in it get no fresh allowance', () => {
    const refuse = limitKeyFailures({ perSecond: 1, burst: 3 }, () => 0);
    const refusal = new HttpProblem('unauthorized', 'no key');
    const from = (remoteAddress: string) => refuse({ socket: { remoteAddress } } as IncomingMessage, refusal).code;
    const codes = Array.from({ length: 5 }, (_, index) => from(`2001:db8:0:1::${index + 1}`));
    assert.deepEqual(codes, ['unauthorized', 'unauthorized', 'unauthorized', 'rate_limited', 'rate_limited']);
    assert.equal(from('2001:db8:0:2::1'), 'unauthorized', 'another /64 has its own allowance');
  });
});

/** Opens a connection to the service's IPv6 loopback listener. */
function connectToIpv6Loopback(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '::1' });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('a service listening on the IPv6 loopback', () => {
  let api: TestService;
  const sockets: Socket[] = [];

  before(async () => {
    api = await startTestService({ HOST: '::1', PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '2', PETSTORE_KEY_FAILURE_LIMIT: '1,2' });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await api.stop();
  });

  it('counts ::1 as one client: its key failures and its connections', async () => {
    const port = api.service.port;
    const [first, second] = [await connectToIpv6Loopback(port), await connectToIpv6Loopback(port)];
    sockets.push(first!, second!);
    const statuses: number[] = [];
    for (let index = 0; index < 3; index++) {
      const response: RawResponse = await exchangeOn(first!, 'GET /v1/pets HTTP/1.1\r\nHost: test\r\n\r\n');
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [401, 401, 429]);
    const third = await connectToIpv6Loopback(port);
    sockets.push(third);
    assert.equal(parseResponse(await closedBy(third, 5_000)), undefined, 'a third connection was served');
  });
});
