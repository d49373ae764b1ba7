import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerLimits } from '../../config/config.ts';
import { clientAddressKey } from '../guards/client-address.ts';

/** Past this share of the connection cap the server is under pressure, and waiting connections are closed sooner. */
export const PRESSURE_SHARE = 3 / 4;

/** What the server tells the limits of each request: when it begins, and when its answer is closed. */
export interface ClientLimits {
  requestBegan(socket: Socket, response: ServerResponse): void;
  requestEnded(socket: Socket, response: ServerResponse): void;
  /** Whether the connection's latest answer has begun (its head is written): nothing else may be written on it then. */
  answerBegun(socket: Socket): boolean;
}

/**
 * Connections that hold an event stream, and since when: a stream waits for events as an idle
 * connection waits for a request, and gives way alike under pressure (its client resumes elsewhere or later).
 */
const streamingSince = new WeakMap<Socket, number>();

/** Marks the connection as holding an event stream from now on. */
export function holdsEventStream(socket: Socket): void {
  streamingSince.set(socket, performance.now());
}

/** One open connection: its requests in flight, since when it has had none (undefined while it has), and its latest answer. */
interface HeldConnection {
  inFlight: number;
  waitingSince: number | undefined;
  answering: ServerResponse | undefined;
}

/**
 * Keeps one client from taking the service from the others. Each client address (an IPv6 client by
 * its /64, see `clientAddressKey`) may hold at most `maxConnectionsPerClient` connections: one more is
 * closed as it arrives, before anything of it is read. Under pressure, a connection that has waited
 * `waitingTimeoutUnderPressureMs` with no request in flight (silent, trickling its headers, idle
 * between requests) or holding an event stream is closed, so held places free up within a second
 * rather than the full header or keep-alive timeout. A request only counts on its connection's record:
 * nothing is added or removed per request.
 */
export function limitClients(server: Server, limits: ServerLimits): ClientLimits {
  const heldByAddress = new Map<string, number>();
  const open = new Map<Socket, HeldConnection>();
  const pressureAbove = Math.floor(limits.maxConnections * PRESSURE_SHARE);

  const closeLongWaiting = () => {
    if (open.size <= pressureAbove) return;
    const deadline = performance.now() - limits.waitingTimeoutUnderPressureMs;
    for (const [socket, held] of open) {
      const waitingSince = held.waitingSince ?? streamingSince.get(socket);
      if (waitingSince === undefined || waitingSince > deadline) continue;
      held.waitingSince = undefined;
      socket.destroy();
    }
  };

  server.on('connection', (socket: Socket) => {
    const address = clientAddressKey(socket.remoteAddress ?? '');
    const held = heldByAddress.get(address) ?? 0;
    if (held >= limits.maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    heldByAddress.set(address, held + 1);
    open.set(socket, { inFlight: 0, waitingSince: performance.now(), answering: undefined });
    socket.once('close', () => {
      const left = heldByAddress.get(address)! - 1;
      if (left === 0) heldByAddress.delete(address);
      else heldByAddress.set(address, left);
      open.delete(socket);
    });
    closeLongWaiting();
  });

  const sweep = setInterval(closeLongWaiting, Math.max(25, Math.floor(limits.waitingTimeoutUnderPressureMs / 4)));
  sweep.unref();
  server.once('close', () => clearInterval(sweep));

  return {
    requestBegan(socket, response) {
      const held = open.get(socket);
      if (held === undefined) return;
      held.inFlight++;
      held.waitingSince = undefined;
      held.answering = response;
    },
    requestEnded(socket, response) {
      const held = open.get(socket);
      if (held === undefined) return;
      held.inFlight--;
      if (held.answering === response) held.answering = undefined;
      if (held.inFlight === 0 && !socket.destroyed) held.waitingSince = performance.now();
    },
    answerBegun: (socket) => open.get(socket)?.answering?.headersSent === true,
  };
}
