import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { followLog } from '../../../application/index.ts';
import type { Commits, EventLog, LogQuery } from '../../../application/index.ts';
import { RECONNECT_MS } from '../../../contract/event-feed.ts';
import type { EventStreamLimits } from '../../config/config.ts';
import { holdsEventStream } from '../server/client-limits.ts';
import { cloudEventJson } from '../../../contract/cloud-events.ts';
import { HttpProblem } from '../pipeline/errors.ts';

/** Events read from the log at a time while a stream catches up: what one stream holds beside its socket's buffer. */
const PAGE_EVENTS = 500;
/** What a refused stream is told to wait before asking again, in seconds. */
const RETRY_AFTER_SECONDS = '5';

export interface EventStreams {
  /**
   * Checks that one more stream may open for the client `client` (its `clientAddressKey`): throws the
   * 503 `HttpProblem` when every stream is taken, the 429 one when the client holds its share. Returns
   * the function that then serves it on `response`, resolving once the stream has ended. `keyId` is the
   * key it was opened with: the stream ends when that key is revoked.
   */
  admit(client: string, keyId: string): (response: ServerResponse, from: Omit<LogQuery, 'limit'>, source: string) => Promise<void>;
  /** Streams open now. */
  readonly open: number;
  /** Ends the open streams of a key that was revoked, cleanly; the client's reconnection gets 401. */
  keyRevoked(keyId: string): void;
  /** Ends every open stream cleanly and refuses new ones: for shutdown. */
  close(): void;
}

/**
 * Server-Sent Events over the log (`followLog`): the page after next is read only once the socket has
 * taken the last (the log is the buffer, so a slow client costs two pages), and a stream silent for the
 * heartbeat interval sends a comment line. An idle stream is one listener and one timer.
 */
export function createEventStreams(
  ports: { readonly eventLog: Pick<EventLog, 'readLog'>; readonly commits: Pick<Commits, 'onCommitted'> },
  limits: EventStreamLimits,
  logger?: Logger,
): EventStreams {
  /** Each open stream's stop, and the key it was opened with. */
  const open = new Map<AbortController, string>();
  const openByClient = new Map<string, number>();
  let closed = false;

  async function serve(client: string, keyId: string, response: ServerResponse, from: Omit<LogQuery, 'limit'>, source: string): Promise<void> {
    const stop = new AbortController();
    open.set(stop, keyId);
    openByClient.set(client, (openByClient.get(client) ?? 0) + 1);
    const end = () => stop.abort();
    response.once('close', end);
    // The server keeps a half-closed connection open for answers still being prepared; a stream has no
    // more to prepare, so a client that closes its side has left, and the stream ends with it.
    const socket = response.socket;
    socket?.once('end', end);
    if (socket?.readableEnded) end();
    /** Resolves once the socket has taken what it holds, or the stream ends. */
    const drained = () => new Promise<void>((resolve) => {
      const done = () => {
        response.off('drain', done);
        stop.signal.removeEventListener('abort', done);
        resolve();
      };
      response.once('drain', done);
      stop.signal.addEventListener('abort', done, { once: true });
    });
    const pages = followLog(ports, from, { pageSize: PAGE_EVENTS, idleMs: limits.heartbeatMs, signal: stop.signal });
    try {
      response.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        // A stream ends only when the client or the server goes: the connection goes with it.
        Connection: 'close',
        'X-Accel-Buffering': 'no',
      });
      response.write(`retry: ${RECONNECT_MS}\n\n`);
      if (socket) holdsEventStream(socket);
      // The next page is read while the socket takes the last: a stream holds at most one page beside its socket's buffer.
      let next = pages.next();
      for (let read = await next; !read.done; read = await next) {
        const page = read.value;
        let text = page.length === 0 ? ':\n\n' : '';
        for (const stored of page) text += `id: ${stored.position}\ndata: ${cloudEventJson(stored, source)}\n\n`;
        const flowing = response.write(text);
        next = pages.next();
        // Its failure is met at the `await next` above; until then it must not count as unhandled.
        next.catch(() => undefined);
        if (!flowing) await drained();
      }
    } catch (error) {
      // The client resumes from the last id it saw, here or on another instance.
      logger?.warn({ err: error }, 'an event stream ended early: the log could not be read');
    } finally {
      stop.abort();
      await pages.return(undefined).catch(() => undefined);
      open.delete(stop);
      const left = openByClient.get(client)! - 1;
      if (left === 0) openByClient.delete(client);
      else openByClient.set(client, left);
      response.off('close', end);
      socket?.off('end', end);
      if (!response.writableEnded) response.end();
    }
  }

  return {
    admit(client, keyId) {
      if (closed) throw new HttpProblem('unavailable', 'the service is shutting down; resume on another instance', { 'Retry-After': '1' });
      // A client past its own share hears so first: waiting for others' streams to end would not help it.
      if ((openByClient.get(client) ?? 0) >= limits.maxStreamsPerClient) {
        throw new HttpProblem('rate_limited', `too many event streams are open from this address (at most ${limits.maxStreamsPerClient}); close one or try again later`, {
          'Retry-After': RETRY_AFTER_SECONDS,
        });
      }
      if (open.size >= limits.maxStreams) {
        throw new HttpProblem('unavailable', `too many event streams are open (at most ${limits.maxStreams}); try again later`, {
          'Retry-After': RETRY_AFTER_SECONDS,
        });
      }
      return (response, from, source) => serve(client, keyId, response, from, source);
    },
    get open() {
      return open.size;
    },
    keyRevoked(keyId) {
      for (const [stop, opener] of [...open]) if (opener === keyId) stop.abort();
    },
    close() {
      closed = true;
      for (const stop of [...open.keys()]) stop.abort();
    },
  };
}
