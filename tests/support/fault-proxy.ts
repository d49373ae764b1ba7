import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with one request. */
export type Fault =
  /** Passes the request on and the answer back. */
  | { readonly kind: 'forward' }
  /** Passes the request on, lets the service finish (and commit), then closes the client's connection unanswered. */
  | { readonly kind: 'drop-after-commit' }
  /** Closes the client's connection at once; the service never sees the request. */
  | { readonly kind: 'drop' }
  /** Holds the request until the client gives up on it, and only then passes it on: the service commits after the client left. */
  | { readonly kind: 'forward-after-client-left' }
  /** Never answers; the service never sees the request. */
  | { readonly kind: 'hang' }
  /** Answers by itself; the service never sees the request. */
  | { readonly kind: 'answer'; readonly status: number; readonly headers?: Record<string, string>; readonly body: string }
  /** Passes the request on and the answer back with these headers replaced. */
  | { readonly kind: 'forward-with-headers'; readonly headers: Record<string, string> };

export interface SeenRequest {
  readonly method: string;
  /** Path and query, e.g. /v1/pets?limit=7 */
  readonly path: string;
  readonly headers: Headers;
}

export interface FaultProxy {
  /** The proxy's base address including /v1: what a client is pointed at. */
  readonly baseUrl: string;
  /** Every request that reached the proxy, in order. */
  readonly seen: readonly SeenRequest[];
  /** The faults for the next requests, in order; requests past them are forwarded. */
  plan(...faults: Fault[]): void;
  /** Resolves once `count` requests have reached the proxy. */
  received(count: number): Promise<void>;
  /** Resolves once the proxy has finished handling `count` requests (answered, dropped, or given up by the client). */
  settled(count: number): Promise<void>;
  stop(): Promise<void>;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and lengths that fetch recomputes.
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade']);

/** A tiny HTTP proxy in front of the real service that injects one fault per request, as planned. */
export async function startFaultProxy(targetOrigin: string): Promise<FaultProxy> {
  const seen: SeenRequest[] = [];
  const faults: Fault[] = [];
  const waiters: { count: number; of: 'received' | 'settled'; resolve: () => void }[] = [];
  let settledCount = 0;
  const wake = () => {
    for (const waiter of [...waiters]) {
      if ((waiter.of === 'received' ? seen.length : settledCount) >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  const waitFor = (of: 'received' | 'settled', count: number) =>
    new Promise<void>((resolve) => {
      waiters.push({ count, of, resolve });
      wake();
    });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (!NOT_FORWARDED.has(name) && typeof value === 'string') headers.set(name, value);
    }
    seen.push({ method: request.method!, path: request.url!, headers });
    wake();
    const fault = faults.shift() ?? { kind: 'forward' };
    const forward = async () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const upstream = await fetch(targetOrigin + request.url, { method: request.method!, headers, ...(body ? { body } : {}) });
      return { upstream, body: Buffer.from(await upstream.arrayBuffer()) };
    };
    switch (fault.kind) {
      case 'hang':
        await new Promise((resolve) => response.once('close', resolve));
        return;
      case 'drop':
        dropConnection(request, response);
        return;
      case 'drop-after-commit':
        await forward();
        dropConnection(request, response);
        return;
      case 'forward-after-client-left':
        await new Promise((resolve) => response.once('close', resolve));
        await forward();
        return;
      case 'answer':
        response.writeHead(fault.status, fault.headers).end(fault.body);
        return;
      case 'forward':
      case 'forward-with-headers': {
        const { upstream, body } = await forward();
        const answerHeaders: Record<string, string> = {};
        upstream.headers.forEach((value, name) => {
          if (!NOT_FORWARDED.has(name)) answerHeaders[name] = value;
        });
        if (fault.kind === 'forward-with-headers') Object.assign(answerHeaders, fault.headers);
        response.writeHead(upstream.status, answerHeaders).end(body);
        return;
      }
    }
  }

  /** Closes the client's connection with no answer (Deno's node:http needs the response destroyed as well). */
  function dropConnection(request: IncomingMessage, response: ServerResponse): void {
    response.destroy();
    request.socket.destroy();
  }

  const server = createServer((request, response) => {
    handle(request, response)
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500).end(`fault proxy: ${String(error)}`);
      })
      .finally(() => {
        settledCount++;
        wake();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    plan: (...planned) => void faults.push(...planned),
    received: (count) => waitFor('received', count),
    settled: (count) => waitFor('settled', count),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
