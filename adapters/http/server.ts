import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';
import { errorBody } from './errors.ts';
import type { ErrorCode } from './errors.ts';

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  /** How long in-flight requests may take to finish after shutdown starts. */
  readonly shutdownGraceMs?: number;
  /** The methods a path answers to, so that a method Node's parser refuses can still get 405 on a known path. */
  readonly methodsAllowedAt?: (path: string) => readonly string[];
}

export interface RunningHttpServer {
  readonly server: Server;
  readonly port: number;
  /** Stops accepting, lets requests in flight finish (up to the grace period), then resolves. */
  close(): Promise<void>;
}

export async function startHttpServer(app: Koa, options: HttpServerOptions): Promise<RunningHttpServer> {
  // Without a Host header Node would answer 400 itself, with no body; the app answers in the Error shape instead.
  const server = createServer({ requireHostHeader: false }, app.callback());
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', (error: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) =>
    answerClientError(error, socket, options.methodsAllowedAt ?? (() => [])),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const grace = options.shutdownGraceMs ?? 10_000;
  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const forceClose = setTimeout(() => server.closeAllConnections(), grace);
        forceClose.unref();
        server.close(() => {
          clearTimeout(forceClose);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

/** Requests Node's parser rejects never reach Koa: answer them here in the same Error shape. */
function answerClientError(
  error: Error & { code?: string; rawPacket?: Buffer },
  socket: Socket,
  methodsAllowedAt: (path: string) => readonly string[],
): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, reason, code, message, headers] = error.code === 'HPE_INVALID_METHOD'
    ? describeUnknownMethod(error.rawPacket, methodsAllowedAt)
    : describeClientError(error.code);
  const body = JSON.stringify(errorBody(code, message));
  // Every answer carries a request id, even one that never reached the app (the request's own id may not be readable).
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${randomUUID()}\r\n${headers ?? ''}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

type ClientErrorAnswer = [number, string, ErrorCode, string, string?];

// A request line with a well-formed method token (RFC 9110 §9.1) that Node's parser does not know.
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\/[^\s?#]*)(?:\?\S*)? HTTP\/1\.[01]\r?\n/;

/** 405 with Allow on a known path, as for methods Node knows; 404 elsewhere; 400 when not a request line at all. */
function describeUnknownMethod(rawPacket: Buffer | undefined, methodsAllowedAt: (path: string) => readonly string[]): ClientErrorAnswer {
  const line = REQUEST_LINE.exec(rawPacket?.toString('latin1') ?? '');
  if (!line) return describeClientError(undefined);
  const [, method, path] = line;
  const allowed = methodsAllowedAt(path!);
  if (allowed.length === 0) return [404, 'Not Found', 'not_found', `no resource at ${path}`];
  const allow = allowed.join(', ');
  return [405, 'Method Not Allowed', 'method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allow}`, `Allow: ${allow}\r\n`];
}

function describeClientError(code: string | undefined): ClientErrorAnswer {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request headers are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'request_timeout', 'the request took too long to arrive'];
    default:
      return [400, 'Bad Request', 'invalid_header', 'the request is not valid HTTP/1.1'];
  }
}
