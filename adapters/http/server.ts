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
}

export interface RunningHttpServer {
  readonly server: Server;
  readonly port: number;
  /** Stops accepting, lets requests in flight finish (up to the grace period), then resolves. */
  close(): Promise<void>;
}

export async function startHttpServer(app: Koa, options: HttpServerOptions): Promise<RunningHttpServer> {
  const server = createServer(app.callback());
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', answerClientError);
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
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable || (error.code === 'ECONNRESET')) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = describeClientError(error.code);
  const body = JSON.stringify(errorBody(code, message));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function describeClientError(code: string | undefined): [number, string, ErrorCode, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request headers are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'request_timeout', 'the request took too long to arrive'];
    default:
      return [400, 'Bad Request', 'invalid_header', 'the request is not valid HTTP/1.1'];
  }
}
