import { closeSync, openSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export type Completion = 'ok' | 'fail' | 'info';

/** One operation in flight: complete it once. */
export interface Invocation {
  complete(type: Completion, value: Record<string, unknown>): void;
}

/**
 * Writes a history file as operations happen: one JSON line a record, in the order they happen, with
 * one clock for the whole file (ms since the history began). The invoke's time is taken before the
 * request leaves and the completion's after its answer arrived, so "acknowledged before sent" in the
 * file is true of the real requests.
 */
export interface HistoryFile {
  readonly path: string;
  invoke(process: string, f: string, value: Record<string, unknown>): Invocation;
  /** How many operations were invoked. */
  readonly operations: number;
  close(): void;
}

export function openHistoryFile(path: string): HistoryFile {
  const fd = openSync(path, 'w');
  const began = performance.now();
  let index = 0;
  let operations = 0;
  const outstanding = new Set<string>();
  const write = (process: string, type: string, f: string, value: Record<string, unknown>) => {
    const time = Math.round((performance.now() - began) * 1000) / 1000;
    writeSync(fd, `${JSON.stringify({ index: index++, process, type, f, time, value })}\n`);
  };
  return {
    path,
    invoke(process, f, value) {
      if (outstanding.has(process)) throw new Error(`${process} invoked ${f} with an operation outstanding`);
      outstanding.add(process);
      operations++;
      write(process, 'invoke', f, value);
      let done = false;
      return {
        complete(type, completion) {
          if (done) throw new Error(`${process}'s ${f} completed twice`);
          done = true;
          outstanding.delete(process);
          write(process, type, f, completion);
        },
      };
    },
    get operations() {
      return operations;
    },
    close: () => closeSync(fd),
  };
}
