import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerLimits } from '../config/config.ts';

/** Past this share of the connection cap the server is under pressure, and waiting connections are closed sooner. */
export const PRESSURE_SHARE = 3 / 4;

/**
 * Keeps one client from taking the service from the others. Each client address may hold at most
 * `maxConnectionsPerClient` connections: one more is closed as it arrives, before anything of it is read.
 * Under pressure, a connection that has waited `waitingTimeoutUnderPressureMs` with no request in flight
 * (silent, trickling its headers, or idle between requests) is closed, so held places free up within a
 * second rather than the full header or keep-alive timeout.
 */
export function limitClients(server: Server, limits: ServerLimits): void {
  const heldByAddress = new Map<string, number>();
  // Connections with no request in flight, and since when; in that order, as each is re-added at the end.
  const waitingSince = new Map<Socket, number>();
  const requestsInFlight = new Map<Socket, number>();
  const pressureAbove = Math.floor(limits.maxConnections * PRESSURE_SHARE);
  let open = 0;

  const closeLongWaiting = () => {
    if (open <= pressureAbove) return;
    const deadline = performance.now() - limits.waitingTimeoutUnderPressureMs;
    for (const [socket, since] of waitingSince) {
      if (since > deadline) break;
      waitingSince.delete(socket);
      socket.destroy();
    }
  };

  server.on('connection', (socket: Socket) => {
    const address = clientAddress(socket);
    const held = heldByAddress.get(address) ?? 0;
    if (held >= limits.maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    heldByAddress.set(address, held + 1);
    open++;
    waitingSince.set(socket, performance.now());
    socket.once('close', () => {
      const left = heldByAddress.get(address)! - 1;
      if (left === 0) heldByAddress.delete(address);
      else heldByAddress.set(address, left);
      open--;
      waitingSince.delete(socket);
      requestsInFlight.delete(socket);
    });
    closeLongWaiting();
  });

  const startRequest = (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    requestsInFlight.set(socket, (requestsInFlight.get(socket) ?? 0) + 1);
    waitingSince.delete(socket);
    response.once('close', () => {
      const left = (requestsInFlight.get(socket) ?? 1) - 1;
      if (left > 0) {
        requestsInFlight.set(socket, left);
        return;
      }
      requestsInFlight.delete(socket);
      if (!socket.destroyed) waitingSince.set(socket, performance.now());
    });
  };
  server.on('request', startRequest);
  // Node emits a request with an Expect header it does not know here instead.
  server.on('checkExpectation', startRequest);

  const sweep = setInterval(closeLongWaiting, Math.max(25, Math.floor(limits.waitingTimeoutUnderPressureMs / 4)));
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
}

/** The client's IP address; an IPv4 address mapped into IPv6 counts as the IPv4 one. */
function clientAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
