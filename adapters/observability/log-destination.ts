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
 * Each line is encoded into the chunk as it comes, off V8's heap: no line stays a string until its
 * chunk is written (a joined string of a chunk's lines outlived young collections and was copied by
 * them). sonic-boom writes each chunk synchronously (no thread hand-off; a slow reader of stdout slows
 * the service rather than growing its memory) and deals with partial writes and EAGAIN.
 */
export function bufferedStdout(): LogDestination {
  const sonic = pino.destination({ dest: 1, sync: true, minLength: 0, maxWrite: LOG_CHUNK_BYTES, contentMode: 'buffer' });
  let chunk = Buffer.allocUnsafe(LOG_CHUNK_BYTES);
  let used = 0;
  // Its typings know only text mode; in buffer mode it takes a Buffer.
  const send = (bytes: Buffer) => sonic.write(bytes as unknown as string);
  const writePending = () => {
    if (used === 0) return;
    // sonic-boom may keep what a partial write left: the next lines go to a new chunk.
    send(chunk.subarray(0, used));
    chunk = Buffer.allocUnsafe(LOG_CHUNK_BYTES);
    used = 0;
  };
  setInterval(writePending, LOG_FLUSH_MS).unref();
  // pino flushes its own asynchronous destinations on exit; a synchronous one with a buffer is ours to flush.
  process.on('exit', () => {
    writePending();
    sonic.flushSync();
  });
  return {
    write(line: string) {
      // A UTF-16 code unit takes at most 3 bytes in UTF-8: a line that might not fit goes in the next chunk, or alone.
      const most = line.length * 3;
      if (used + most > LOG_CHUNK_BYTES) {
        writePending();
        if (most > LOG_CHUNK_BYTES) return void send(Buffer.from(line));
      }
      used += chunk.write(line, used);
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
