import pino from 'pino';
import type { DestinationStream } from 'pino';

/** Log lines are written in chunks of about this size, or after this long, whichever comes first. */
export const LOG_CHUNK_BYTES = 16 * 1024;
export const LOG_FLUSH_MS = 1000;

export interface LogDestination extends DestinationStream {
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * stdout for pino, buffered: a write system call per request would cost as much as the rest of a
 * cached listing, so lines go out in chunks, at least once a second, and on exit. A killed process
 * (SIGKILL, power loss) can lose up to a second of log lines, never data.
 *
 * The chunks are written synchronously (no thread hand-off per chunk; a slow reader of stdout slows
 * the service rather than growing its memory), and the buffer holds bytes, each line encoded once:
 * sonic-boom's text mode measures its whole pending chunk again on every line.
 */
export function bufferedStdout(): LogDestination {
  const sonic = pino.destination({
    dest: 1, sync: true, minLength: LOG_CHUNK_BYTES, maxWrite: 4 * LOG_CHUNK_BYTES, periodicFlush: LOG_FLUSH_MS, contentMode: 'buffer',
  });
  // pino flushes its own asynchronous destinations on exit; a synchronous one with a buffer is ours to flush.
  process.on('exit', () => sonic.flushSync());
  return {
    // Its typings know only text mode; in buffer mode it takes (and needs) a Buffer.
    write: (line: string) => sonic.write(Buffer.from(line) as unknown as string),
    flush: (callback) => sonic.flush(callback),
    flushSync: () => sonic.flushSync(),
  };
}
