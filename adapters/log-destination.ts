import pino from 'pino';
import type { DestinationStream } from 'pino';

/** The request log is written in chunks of this size, or after this long, whichever comes first. */
export const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 1000;

export interface LogDestination extends DestinationStream {
  flush(callback?: (error?: Error) => void): void;
}

/**
 * stdout for pino, buffered: a write system call per request would cost as much as the rest of a
 * cached listing, so lines go out in chunks, at least once a second, and pino flushes what is left
 * when the process exits. A killed process (SIGKILL, power loss) can lose up to a second of log
 * lines, never data.
 *
 * The buffer holds bytes, each line encoded once: sonic-boom's text mode measures its whole pending
 * chunk again on every line, which made logging cost more than the rest of the request.
 */
export function bufferedStdout(): LogDestination {
  const sonic = pino.destination({ dest: 1, minLength: LOG_BUFFER_BYTES, sync: false, periodicFlush: LOG_FLUSH_MS, contentMode: 'buffer' });
  return {
    // Its typings know only text mode; in buffer mode it takes (and needs) a Buffer.
    write: (line: string) => sonic.write(Buffer.from(line) as unknown as string),
    flush: (callback) => sonic.flush(callback),
  };
}
