import { PetStoreAbortError, PetStoreError } from './errors.ts';
import { errorFrom } from './exchange.ts';
import { isRetryable, retryDelay, wait } from './retry.ts';
import type { RetryPolicy } from './retry.ts';
import type { CloudEvent } from './types.ts';

/** One Server-Sent Events message (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export interface SseMessage {
  readonly id?: string;
  readonly data?: string;
  readonly retry?: number;
}

/** The messages of an SSE body, as they complete; comments and unknown fields are skipped. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffered = '';
  let message: { id?: string; data?: string; retry?: number } = {};
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + (buffered.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (message.data !== undefined || message.retry !== undefined) yield message;
          message = {};
          continue;
        }
        const colon = line.indexOf(':');
        if (colon === 0) continue;
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
        else if (field === 'id') message.id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export interface FollowOptions {
  readonly apiKey: string;
  /** The stream's address, continuing after `after`. */
  readonly url: (after: number) => URL;
  readonly after: number;
  readonly retry: RetryPolicy;
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal | undefined;
}

/**
 * The log's events from `after` on, as long as the caller iterates: a stream that breaks or ends is
 * opened again after the last event seen (`Last-Event-ID`), after a back-off, so nothing is missed and
 * nothing comes twice. An answer that retrying cannot mend (a 4xx) is thrown; so is an abort.
 */
export async function* followEvents(options: FollowOptions): AsyncGenerator<CloudEvent, never, undefined> {
  const { signal } = options;
  let after = options.after;
  let reconnectMs: number | undefined;
  for (let failures = 0; ; failures++) {
    if (signal?.aborted) throw new PetStoreAbortError('the event stream was aborted', signal.reason);
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let retryAfterMs = reconnectMs;
    try {
      const response = await fetch(options.url(after), {
        headers: { ...options.headers, accept: 'text/event-stream', authorization: `Bearer ${options.apiKey}`, 'last-event-id': String(after) },
        signal: controller.signal,
      });
      if (!response.ok) {
        const error = errorFrom(response, await response.text());
        if (!isRetryable(error)) throw error;
        retryAfterMs = error.retryAfterMs;
      } else {
        for await (const message of sseMessages(response.body!)) {
          if (message.retry !== undefined) reconnectMs = message.retry;
          if (message.data === undefined) continue;
          const event = JSON.parse(message.data) as CloudEvent;
          after = Number(message.id ?? event.id);
          failures = 0;
          yield event;
        }
      }
    } catch (error) {
      if (signal?.aborted) throw new PetStoreAbortError('the event stream was aborted', signal.reason);
      // fetch reports a failed connection or a body cut off as a TypeError: open the stream again.
      if (error instanceof PetStoreError || !(error instanceof TypeError)) throw error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
    await wait(retryDelay(failures, options.retry, retryAfterMs), signal);
  }
}
