/** One Server-Sent Events message as the client sees it (a comment-only block is `{ comment }`). */
export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly retry?: string;
  readonly comment?: string;
}

export interface EventStreamReader {
  readonly response: Response;
  /** The next message; rejects when the stream ends first (`ended` says whether it ended cleanly). */
  next(): Promise<SseMessage>;
  /** The next message carrying data, skipping `retry:` and comments. */
  nextEvent(): Promise<SseMessage & { data: string; id: string }>;
  /** Resolves when the body ends cleanly; rejects when it breaks (reset). Messages left unread are dropped. */
  ended(): Promise<void>;
  close(): void;
}

/** Opens `url` with `Accept: text/event-stream` and reads its messages, one block (ending in a blank line) at a time. */
export async function openEventStream(url: string, headers: Record<string, string>): Promise<EventStreamReader> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const read = async (): Promise<string | undefined> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        return block;
      }
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffered += decoder.decode(value, { stream: true });
    }
  };
  const next = async (): Promise<SseMessage> => {
    const block = await read();
    if (block === undefined) throw new Error('the stream ended');
    const message: Record<string, string> = {};
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      message[field === '' ? 'comment' : field] = field === 'data' && message.data !== undefined ? `${message.data}\n${value}` : value;
    }
    return message;
  };
  return {
    response,
    next,
    async nextEvent() {
      for (;;) {
        const message = await next();
        if (message.data !== undefined) return message as SseMessage & { data: string; id: string };
      }
    },
    async ended() {
      while ((await read()) !== undefined);
    },
    close: () => controller.abort(),
  };
}
