import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';

/** Set by the primary on each worker it starts: the worker's number, from 1 (a restarted worker keeps its number). */
export const WORKER_VARIABLE = 'PETSTORE_WORKER';

/** What a worker tells the primary once it listens. */
export interface WorkerListening {
  readonly type: 'petstore:listening';
  readonly port: number;
  readonly baseUrl: string;
}

/** A worker asks the primary for every worker's metrics; the primary answers with the text, or why not. */
interface MetricsRequest {
  readonly type: 'petstore:metrics-request';
  readonly id: number;
}
interface MetricsAnswer {
  readonly type: 'petstore:metrics';
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/**
 * In a worker: a function giving every worker's series, which the primary gathers with prom-client's
 * cluster aggregation (each worker's series keep their `worker` label). It fails when a worker does not
 * answer within prom-client's 5 s (one starting again).
 */
export function askPrimaryForMetrics(): () => Promise<string> {
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  let next = 0;
  process.on('message', (message: MetricsAnswer) => {
    if (message?.type !== 'petstore:metrics') return;
    const asked = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.text === undefined) asked?.reject(new Error(message.error ?? 'no metrics'));
    else asked?.resolve(message.text);
  });
  return () => new Promise<string>((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject });
    process.send!({ type: 'petstore:metrics-request', id } satisfies MetricsRequest);
  });
}

// Beyond the workers' own grace period: time for them to close the database and exit.
const EXIT_MARGIN_MS = 5000;

/**
 * The primary of PETSTORE_WORKERS processes sharing one port (node:cluster hands each connection to one
 * of them). Worker 1 starts alone, so that it migrates the database and makes any development key
 * before the others open it; then the rest. A worker that dies while serving is started again under its
 * number; one that cannot start stops everything. SIGTERM or SIGINT stops every worker, each finishing
 * its requests in flight, and the primary exits when they have (1 if any failed to).
 */
export interface WorkersOutput {
  /** Where the primary says what it does (at info whatever the log level). */
  readonly notices: Logger;
  /** The line that says where the service listens, once every worker does. */
  listening(port: number, baseUrl: string): string;
  /** The module each worker runs, bare (it serves): the process entry (under `npm start`, the built one, not the script that builds it). */
  readonly entry: string;
}

export async function runWorkers(config: Config, { notices, listening: listeningLine, entry }: WorkersOutput): Promise<void> {
  // Loaded only by a primary: Deno has no working node:cluster, and one process needs none.
  const { default: cluster } = await import('node:cluster');
  cluster.setupPrimary({ exec: entry, args: [] });
  const workers = new Map<number, Worker>();
  let stopping = false;
  if (config.metrics) {
    // prom-client is loaded only when metrics are on, as in the workers.
    const { AggregatorRegistry } = await import('prom-client');
    const aggregator = new AggregatorRegistry();
    cluster.on('message', (worker, message: MetricsRequest) => {
      if (message?.type !== 'petstore:metrics-request') return;
      const answer = (reply: Omit<MetricsAnswer, 'type' | 'id'>) => {
        if (worker.isConnected()) worker.send({ type: 'petstore:metrics', id: message.id, ...reply } satisfies MetricsAnswer);
      };
      aggregator.clusterMetrics().then((text) => answer({ text }), (error: Error) => answer({ error: error.message }));
    });
  }

  const fork = (number: number): Promise<WorkerListening> => {
    const worker = cluster.fork({ [WORKER_VARIABLE]: String(number) });
    workers.set(number, worker);
    const listening = new Promise<WorkerListening>((resolve, reject) => {
      worker.on('message', (message: WorkerListening) => {
        if (message?.type !== 'petstore:listening') return;
        notices.info({ worker: number, workerPid: worker.process.pid }, `worker ${number} (pid ${worker.process.pid}) serving`);
        resolve(message);
      });
      worker.once('exit', (code, signal) => reject(new Error(`worker ${number} exited (${signal ?? code}) before it listened`)));
    });
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      // Only a worker that was serving is replaced; one that could not start is reported by `listening`.
      listening.then(() => {
        notices.error({ worker: number, workerPid: worker.process.pid, code, signal }, `worker ${number} (pid ${worker.process.pid}) exited (${signal ?? code}); starting it again`);
        fork(number).catch(failed);
      }, () => undefined);
    });
    return listening;
  };

  const stop = (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    const running = [...workers.values()].filter((worker) => worker.process.exitCode === null && worker.process.signalCode === null);
    let failures = exitCode;
    let left = running.length;
    const done = () => {
      notices.flush();
      process.exit(failures === 0 ? 0 : 1);
    };
    if (left === 0) done();
    for (const worker of running) {
      worker.process.once('exit', (code) => {
        if (code !== 0) failures++;
        if (--left === 0) done();
      });
      worker.process.kill('SIGTERM');
    }
    setTimeout(() => {
      notices.error('workers still running after the grace period: killing them');
      notices.flush();
      for (const worker of running) worker.process.kill('SIGKILL');
      process.exit(1);
    }, config.limits.shutdownGraceMs + EXIT_MARGIN_MS).unref();
  };
  const failed = (error: Error) => {
    notices.error(`petstore failed to start: ${error.message}`);
    stop(1);
  };

  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  try {
    const first = await fork(1);
    await Promise.all(Array.from({ length: config.workers - 1 }, (_, index) => fork(index + 2)));
    notices.info({ workers: config.workers }, listeningLine(first.port, first.baseUrl));
    notices.flush();
  } catch (error) {
    failed(error as Error);
  }
}
