import pino from 'pino';
import type { DestinationStream } from 'pino';

/** Log lines are written in chunks of about this size, or after this long, whichever comes first. */
export const LOG_CHUNK_BYTES = 64 * 1024;
export const LOG_FLUSH_MS = 1000;

export interface LogDestination extends DestinationStream {
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * stdout for pino, buffered: a write system call per request would cost as much as the rest of a
 * cached listing, so lines go out in chunks of a few hundred lines, at least once a second, and on exit. A killed process
 * (SIGKILL, power loss) can lose up to a second of log lines, never data.
 *
 * Lines are gathered as text (joining strings is cheap) and encoded once a chunk; sonic-boom writes
 * each chunk synchronously (no thread hand-off; a slow reader of stdout slows the service rather than
 * growing its memory) and deals with partial writes and EAGAIN.
 */
export function bufferedStdout(): LogDestination {
  const sonic = pino.destination({ dest: 1, sync: true, minLength: 0, maxWrite: LOG_CHUNK_BYTES, contentMode: 'buffer' });
  let pending = '';
  const writePending = () => {
    if (pending === '') return;
    // Its typings know only text mode; in buffer mode it takes a Buffer.
    sonic.write(Buffer.from(pending) as unknown as string);
    pending = '';
  };
  setInterval(writePending, LOG_FLUSH_MS).unref();
  // pino flushes its own asynchronous destinations on exit; a synchronous one with a buffer is ours to flush.
  process.on('exit', () => {
    writePending();
    sonic.flushSync();
  });
  return {
    write(line: string) {
      pending += line;
      if (pending.length >= LOG_CHUNK_BYTES) writePending();
    },
    flush(callback) {
      writePending();
      sonic.flush(callback);
    },
    flushSync() {
      writePending();
      sonic.flushSync();
    },
  };
}
