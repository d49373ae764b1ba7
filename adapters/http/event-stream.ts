import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { CommitSignal, EventLog, LogQuery } from '../../application/index.ts';
import type { EventStreamLimits } from '../config/config.ts';
import { cloudEventJson } from './cloud-events.ts';
import { HttpProblem } from './errors.ts';

/** Events read from the log at a time while a stream catches up: what one stream may hold beyond its socket's buffer. */
const PAGE_EVENTS = 500;
/** What `retry:` tells a client to wait before reconnecting, in milliseconds. */
export const RECONNECT_MS = 2000;
/** What a refused stream is told to wait before asking again, in seconds. */
const RETRY_AFTER_SECONDS = '5';

export interface EventStreams {
  /**
   * Checks that one more stream may open (throws the 503 `HttpProblem` otherwise) and returns the
   * function that then serves it on `response`, resolving once the stream has ended.
   */
  admit(): (response: ServerResponse, from: Omit<LogQuery, 'limit'>, source: string) => Promise<void>;
  /** Streams open now. */
  readonly open: number;
  /** Ends every open stream cleanly and refuses new ones: for shutdown. */
  close(): void;
}

/**
 * Server-Sent Events over the log: each stream catches up page by page, reading the next page only
 * once the socket has taken the last (the log is the buffer, so a slow client costs one page), then
 * waits for the commit signal and reads what is new from its own position: never a gap, never an
 * event twice. An idle stream is one listener and one timer.
 */
export function createEventStreams(
  ports: { readonly eventLog: EventLog; readonly commits: CommitSignal },
  limits: EventStreamLimits,
  logger?: Logger,
): EventStreams {
  const ends = new Set<() => void>();
  let closed = false;

  async function serve(response: ServerResponse, from: Omit<LogQuery, 'limit'>, source: string): Promise<void> {
    let position = from.after;
    let unread = true;
    let ended = false;
    let wake: (() => void) | undefined;
    const end = () => {
      ended = true;
      wake?.();
    };
    const unsubscribe = ports.commits.onCommitted(() => {
      unread = true;
      wake?.();
    });
    ends.add(end);
    response.once('close', end);
    let silentSince = Date.now();
    const write = (text: string): boolean => {
      silentSince = Date.now();
      return response.write(text);
    };
    /** Resolves on `event` (if any), a commit, the end, or after `ms`. */
    const pause = (ms: number, event?: 'drain') => new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        if (event) response.off(event, done);
        wake = undefined;
        resolve();
      }
      if (event) response.once(event, done);
      wake = done;
    });
    try {
      response.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        // A stream ends only when the client or the server goes: the connection goes with it.
        Connection: 'close',
        'X-Accel-Buffering': 'no',
      });
      write(`retry: ${RECONNECT_MS}\n\n`);
      while (!ended) {
        if (unread) {
          unread = false;
          const page = await ports.eventLog.readLog({ ...from, after: position, limit: PAGE_EVENTS });
          if (ended) break;
          if (page.length > 0) {
            position = page.at(-1)!.position;
            if (page.length === PAGE_EVENTS) unread = true;
            let text = '';
            for (const stored of page) text += `id: ${stored.position}\ndata: ${cloudEventJson(stored, source)}\n\n`;
            if (!write(text)) while (!ended && response.writableNeedDrain) await pause(limits.heartbeatMs, 'drain');
            continue;
          }
        }
        const quiet = Date.now() - silentSince;
        if (quiet >= limits.heartbeatMs) {
          write(':\n\n');
          continue;
        }
        await pause(limits.heartbeatMs - quiet);
      }
    } catch (error) {
      // The client resumes from the last id it saw, here or on another instance.
      logger?.warn({ err: error }, 'an event stream ended early: the log could not be read');
    } finally {
      unsubscribe();
      ends.delete(end);
      response.off('close', end);
      if (!response.writableEnded) response.end();
    }
  }

  return {
    admit() {
      if (closed) throw new HttpProblem('unavailable', 'the service is shutting down; resume on another instance', { 'Retry-After': '1' });
      if (ends.size >= limits.maxStreams) {
        throw new HttpProblem('unavailable', `too many event streams are open (at most ${limits.maxStreams}); try again later`, {
          'Retry-After': RETRY_AFTER_SECONDS,
        });
      }
      return serve;
    },
    get open() {
      return ends.size;
    },
    close() {
      closed = true;
      for (const end of [...ends]) end();
    },
  };
}
