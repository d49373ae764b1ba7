import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { checkErrorShape } from './error-shape.ts';

/** One HTTP/1.1 answer as read off the wire. */
export interface RawResponse {
  readonly status: number;
  /** Lower-case names; repeated fields joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface RawExchange {
  /** Every byte the server sent before it closed the connection (or the wait ended). */
  readonly bytes: Buffer;
  /** True when the server closed the connection; false when `timeoutMs` passed first. */
  readonly closed: boolean;
  /** The first answer in `bytes`, if they hold a complete one. */
  readonly response: RawResponse | undefined;
}

export interface RawExchangeOptions {
  /** How long to wait for the server to close the connection (10 s unless given). */
  readonly timeoutMs?: number;
  /** The request is a HEAD: its answer has no body. */
  readonly head?: boolean;
  /** Half-close after the request: the server then knows nothing more is coming, and answers an incomplete request at once. */
  readonly halfClose?: boolean;
  /** The client address to connect from (127.0.0.1 unless given): the service tells clients apart by it. */
  readonly from?: string;
}

/**
 * Sends bytes exactly as given (fetch and node:http refuse to send malformed requests), then reads
 * until the server closes the connection or `timeoutMs` passes.
 */
export function rawExchange(port: number, request: string | Buffer, options: RawExchangeOptions = {}): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: options.from ?? '127.0.0.1' });
    const chunks: Buffer[] = [];
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const bytes = Buffer.concat(chunks);
      resolve({ bytes, closed, response: parseResponse(bytes, options) });
    };
    const timer = setTimeout(() => finish(false), options.timeoutMs ?? 10_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    // A reset after the answer is still a closed connection; before connecting it is a failure.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') {
        clearTimeout(timer);
        reject(error);
      }
    });
    if (options.halfClose) socket.end(request);
    else socket.write(request);
  });
}

/** Opens a connection (from the client address `from`, 127.0.0.1 unless given) and resolves once it is established. */
export function openConnection(port: number, from = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Writes `request` on an open connection and resolves with the next complete answer. */
export function exchangeOn(socket: Socket, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let bytes = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      const response = parseResponse(bytes);
      if (response) {
        cleanUp();
        resolve(response);
      }
    };
    const onClose = () => {
      cleanUp();
      reject(new Error(`connection closed after ${bytes.length} bytes without a complete answer`));
    };
    const cleanUp = () => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.write(request);
  });
}

/**
 * Resolves when the peer has closed the connection, with every byte it sent meanwhile; rejects (and
 * closes it) when it is still open after `timeoutMs`, so that a server that never closes fails the test
 * rather than hangs it.
 */
export function closedBy(socket: Socket, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      reject(new Error(`the server left the connection open for ${timeoutMs} ms`));
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

/**
 * The first complete final answer in `bytes` (by Content-Length or chunked; interim 1xx answers
 * skipped), or undefined. An answer to HEAD has no body, whatever its Content-Length says.
 */
export function parseResponse(bytes: Buffer, options: { head?: boolean } = {}): RawResponse | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  if (status === undefined) throw new Error(`not an HTTP/1.x status line: ${JSON.stringify(statusLine)}`);
  if (status.startsWith('1')) return parseResponse(bytes.subarray(headEnd + 4), options);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rest = bytes.subarray(headEnd + 4);
  if (options.head) return { status: Number(status), headers, body: Buffer.alloc(0) };
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const body = dechunk(rest);
    return body && { status: Number(status), headers, body };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (rest.length < length) return undefined;
  return { status: Number(status), headers, body: rest.subarray(0, length) };
}

function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    if (bytes.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/** Checks an answer is an Error body in JSON whose status matches; returns its code. */
export function errorCodeOf(response: RawResponse): string {
  return checkErrorShape(response.headers['content-type'] ?? '', response.body.toString('utf8'), response.status).code;
}
