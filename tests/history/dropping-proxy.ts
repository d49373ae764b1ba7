import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';

/**
 * A proxy in front of one service that drops one event from one event stream: the first stream to send
 * a third event loses its second (held until the third arrives, so that the consumer surely receives
 * an event after the one it missed). Everything else passes through unchanged.
 */
export interface DroppingProxy {
  /** The proxy's base address, …/v1. */
  readonly base: string;
  /** The position of the event dropped, once one was. */
  readonly dropped: number | undefined;
  close(): Promise<void>;
}

export async function startDroppingProxy(target: string): Promise<DroppingProxy> {
  const upstream = new URL(target);
  let dropped: number | undefined;
  const server: Server = createServer((request, response) => {
    const forwarded = httpRequest({
      host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: { ...request.headers, host: upstream.host },
    }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      const isStream = String(answer.headers['content-type'] ?? '').startsWith('text/event-stream');
      if (!isStream || dropped !== undefined) {
        answer.pipe(response);
        return;
      }
      let buffered = '';
      let events = 0;
      let held: string | undefined;
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        buffered += chunk;
        for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
          const block = buffered.slice(0, end + 2);
          buffered = buffered.slice(end + 2);
          if (dropped !== undefined || !/^data:/m.test(block)) {
            response.write(block);
            continue;
          }
          events++;
          if (events === 2) held = block;
          else if (events === 3 && held !== undefined) {
            dropped = Number(/^id: ?(\d+)$/m.exec(held)?.[1]);
            held = undefined;
            response.write(block);
          } else response.write(block);
        }
      });
      answer.on('end', () => response.end(`${held ?? ''}${buffered}`));
      answer.on('error', () => response.destroy());
    });
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
    response.on('close', () => forwarded.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    base: `http://127.0.0.1:${address.port}${upstream.pathname}`,
    get dropped() {
      return dropped;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
