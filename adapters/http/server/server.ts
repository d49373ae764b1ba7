import { createServer, METHODS } from 'node:http';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ServerLimits } from '../../config/config.ts';
import { limitClients } from './client-limits.ts';
import { errorBody } from '../pipeline/errors.ts';
import type { ErrorCode } from '../../../contract/error-codes.ts';
import { ResponsesInFlight } from './responses-in-flight.ts';
import type { RecordAnswer } from '../pipeline/request-pipeline.ts';
import { newRequestId } from '../../observability/request-log.ts';

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  readonly limits: ServerLimits;
  /** The methods a path answers to, so that a method Node's parser refuses can still get 405 on a known path. */
  readonly methodsAllowedAt?: (path: string) => readonly string[];
  /** The route template a path belongs to, for the log line of a request the parser refused. */
  readonly routeAt?: (path: string) => string | undefined;
  /** The headers every answer of a deprecated operation carries, its refusals here included. */
  readonly deprecationAt?: (method: string, path: string) => Readonly<Record<string, string>> | undefined;
  /** Records the answers given here to what Node's parser refused (their log line and metrics). */
  readonly record?: RecordAnswer | undefined;
}

export interface RunningHttpServer {
  readonly server: Server;
  readonly port: number;
  /** Stops accepting, lets requests in flight finish (up to the grace period), then resolves. */
  close(): Promise<void>;
}

/** Serves `dispatch` (the request pipeline) within the limits; what Node's parser refuses is answered here. */
export async function startHttpServer(dispatch: RequestListener, options: HttpServerOptions): Promise<RunningHttpServer> {
  const { limits } = options;
  const methodsAllowedAt = options.methodsAllowedAt ?? (() => []);
  const deprecationAt = options.deprecationAt ?? (() => undefined);
  const inFlight = new ResponsesInFlight();
  let closing: Promise<void> | undefined;

  const answer = (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const entry = inFlight.add(response);
    clients.requestBegan(socket, response);
    response.once('close', () => {
      inFlight.delete(entry);
      clients.requestEnded(socket, response);
    });
    // Once shutdown has begun, every answer closes its connection so no client keeps one open.
    if (closing) response.setHeader('Connection', 'close');
    dispatch(request, response);
  };

  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks both timeouts only this often (30 s by default): check often enough to keep them.
      connectionsCheckingInterval: Math.min(1000, Math.max(25, Math.floor(limits.headersTimeoutMs / 4))),
      // Node would answer a missing Host with a bare 400; the app answers it in the Error shape instead.
      requireHostHeader: false,
    },
    answer,
  );
  server.maxConnections = limits.maxConnections;
  const clients = limitClients(server, limits);
  // A client may half-close its side once its request is sent. By default Node then drops the
  // connection, and with it an answer still being prepared (a create waits for its group's commit).
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const routeAt = options.routeAt ?? (() => undefined);
  server.on('clientError', (error: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => {
    const started = performance.now();
    const refused = answerClientError(error, socket, clients.answerBegun(socket), methodsAllowedAt, deprecationAt);
    if (refused) {
      const route = refused.path === '' ? null : (routeAt(refused.path) ?? null);
      options.record?.({ requestId: refused.requestId, started }, refused.method, { route, path: refused.path, status: refused.status, keyId: null });
    }
  });
  // RFC 9110 lets a server ignore an expectation it does not support; Node would answer a bare 417.
  server.on('checkExpectation', answer);
  // Node closes a CONNECT without a word when nothing listens for it.
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    writeRawError(socket, [400, 'Bad Request', 'invalid_header', 'CONNECT is not supported: this service is not a proxy']);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const forceClose = setTimeout(() => server.closeAllConnections(), limits.shutdownGraceMs);
        forceClose.unref();
        for (const response of inFlight) if (!response.headersSent) response.setHeader('Connection', 'close');
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

type ClientErrorAnswer = [status: number, reason: string, code: ErrorCode, message: string, headers?: string];

/** What was answered to a refused request, for its log line: the method and path as far as they could be read. */
interface RefusedRequest {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** Requests Node's parser rejects never reach Koa: answer them here in the same Error shape. */
function answerClientError(
  error: Error & { code?: string; rawPacket?: Buffer },
  socket: Socket,
  answerBegun: boolean,
  methodsAllowedAt: (path: string) => readonly string[],
  deprecationAt: (method: string, path: string) => Readonly<Record<string, string>> | undefined,
): RefusedRequest | undefined {
  // A reset connection cannot be answered, nor one whose answer has begun.
  if (!socket.writable || error.code === 'ECONNRESET' || answerBegun) {
    socket.destroy();
    return undefined;
  }
  // Node reports an unknown method as HPE_INVALID_METHOD, Deno as a generic parse error: look at the request line.
  const requestLine = REQUEST_LINE.exec(error.rawPacket?.toString('latin1') ?? '');
  const answer: ClientErrorAnswer = requestLine && !METHODS.includes(requestLine[1]!)
    ? describeUnknownMethod(requestLine[1]!, requestLine[2]!, methodsAllowedAt)
    : [...describeClientError(error.code), headerLines(requestLine ? deprecationAt(requestLine[1]!, requestLine[2]!) : undefined)];
  return { requestId: writeRawError(socket, answer), method: requestLine?.[1] ?? '', path: requestLine?.[2] ?? '', status: answer[0] };
}

function headerLines(headers: Readonly<Record<string, string>> | undefined): string {
  return Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join('');
}

/** Writes the answer and closes; returns the request id it carries. */
function writeRawError(socket: Socket, [status, reason, code, message, headers]: ClientErrorAnswer): string {
  const body = JSON.stringify(errorBody(code, message));
  // Every answer carries a request id, even one that never reached the app (the request's own id may not be readable).
  const requestId = newRequestId();
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${requestId}\r\n${headers ?? ''}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  return requestId;
}

// A request line with a well-formed method token (RFC 9110 §9.1).
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\/[^\s?#]*)(?:\?\S*)? HTTP\/1\.[01]\r?\n/;

/** 405 with Allow on a known path, as for methods Node knows; 404 elsewhere. */
function describeUnknownMethod(method: string, path: string, methodsAllowedAt: (path: string) => readonly string[]): ClientErrorAnswer {
  const allowed = methodsAllowedAt(path);
  if (allowed.length === 0) return [404, 'Not Found', 'not_found', `no resource at ${path}`];
  const allow = allowed.join(', ');
  return [405, 'Method Not Allowed', 'method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allow}`, `Allow: ${allow}\r\n`];
}

function describeClientError(code: string | undefined): [status: number, reason: string, code: ErrorCode, message: string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request headers are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'request_timeout', 'the request took too long to arrive'];
    case 'HPE_INVALID_HEADER_TOKEN':
      return [400, 'Bad Request', 'invalid_header', 'a request header is malformed'];
    default:
      return [400, 'Bad Request', 'invalid_header', 'the request is not valid HTTP/1.1'];
  }
}
