import { ConfigError, loadConfig, localBaseUrl } from '../config/config.ts';
import type { Config } from '../config/config.ts';
import { createLogger } from '../observability/logger.ts';
import { explainedStartFailure } from './start-failure.ts';
import { askPrimaryForMetrics, runWorkers, WORKER_VARIABLE } from './workers.ts';
import type { WorkerListening } from './workers.ts';

export interface ServeOptions {
  /** Whether a person watches standard output (pretty lines, the development key printed). */
  readonly isTerminal?: boolean;
  /** The module workers run (PETSTORE_WORKERS): the process entry. */
  readonly entry?: string;
}

/**
 * Serves until SIGTERM or SIGINT, then finishes requests in flight and exits 0. Everything it says
 * goes through the logger (JSON lines unless a person is watching a terminal in development); the
 * development key is printed only to a terminal, never to a file or pipe that could keep it.
 * With PETSTORE_WORKERS above 1 this process is the primary of that many workers (Node only), each of
 * which serves here too.
 */
export async function serve(environment: Record<string, string | undefined>, options: ServeOptions = {}): Promise<void> {
  const { isTerminal = process.stdout.isTTY === true, entry = process.argv[1]! } = options;
  const config = loadConfig(environment);
  // A worker is a process the primary forked: it has the variable and a channel back to the primary.
  const workerText = environment[WORKER_VARIABLE];
  const worker = workerText === undefined || process.send === undefined ? undefined : Number(workerText);
  const logger = await createLogger(config, isTerminal);
  // Where it listens and that it stops are written at any PETSTORE_LOG_LEVEL: a supervisor waits for them.
  const notices = (worker === undefined ? logger : logger.child({ worker })).child({}, { level: 'info' });
  if (config.workers > 1 && worker === undefined) {
    if (process.versions.deno !== undefined) {
      throw new ConfigError(`PETSTORE_WORKERS is ${config.workers}: several workers on one port need Node's cluster module; on Deno run one process per port`);
    }
    return runWorkers(config, {
      entry,
      notices,
      listening: (port, baseUrl) => listeningLine(config, port, baseUrl, config.workers),
    });
  }
  // Loaded once the configuration is known good, so a mistake is refused before the service's modules load.
  const { startService } = await import('../service.ts');
  const service = await startService(config, {
    logger, worker, ...(worker !== undefined && config.metrics ? { everyWorkersMetrics: askPrimaryForMetrics() } : {}),
  }).catch((error: unknown) => {
    throw explainedStartFailure(config, error);
  });
  if (service.createdDevelopmentKey) {
    const { key, file } = service.createdDevelopmentKey;
    if (isTerminal) process.stdout.write(`\nCreated a development API key (also saved to ${file}):\n\n  ${key}\n\n`);
    else notices.info({ file }, `created a development API key, saved to ${file} (printed only to a terminal)`);
  } else if (service.savedDevelopmentKey) {
    notices.info({ file: service.savedDevelopmentKey }, `the development API key saved at an earlier start is in ${service.savedDevelopmentKey}`);
  }
  if (worker === undefined) {
    const local = localBaseUrl(config.host, service.port);
    notices.info(
      { deployment: config.deployment, url: local, reference: `${local}/docs`, ...(service.baseUrl === local ? {} : { publicBaseUrl: service.baseUrl }) },
      listeningLine(config, service.port, service.baseUrl),
    );
  } else {
    process.send!({ type: 'petstore:listening', port: service.port, baseUrl: service.baseUrl } satisfies WorkerListening);
  }
  logger.flush();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    notices.info({ signal }, `${signal}: finishing requests in flight, then stopping`);
    logger.flush();
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        notices.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Where this process listens, the public base address when a deployment has its own, and where a person reads the API. */
function listeningLine(config: Config, port: number, baseUrl: string, workers?: number): string {
  const local = localBaseUrl(config.host, port);
  const notes = [...(baseUrl === local ? [] : [`public base ${baseUrl}`]), `API reference ${local}/docs`];
  return `petstore (${config.deployment}) listening on ${local} (${notes.join('; ')})${workers ? ` with ${workers} workers` : ''}`;
}
