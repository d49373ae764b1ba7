import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from 'pino';

/** A pino logger at info whose lines are kept, parsed, in `lines`. */
export function capturedLog(): { logger: Logger; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, any>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}
