import { ConfigError, loadConfig, localBaseUrl } from '../config/config.ts';
import type { Config } from '../config/config.ts';
import { startService } from '../service.ts';
import { runWorkers, WORKER_VARIABLE } from './workers.ts';
import type { WorkerListening } from './workers.ts';

/**
 * Serves until SIGTERM or SIGINT, then finishes requests in flight and exits 0. With PETSTORE_WORKERS
 * above 1 this process is the primary of that many workers (Node only); each worker serves here too.
 */
export async function serve(environment: Record<string, string | undefined>, entry = process.argv[1]!): Promise<void> {
  const config = loadConfig(environment);
  const workerText = environment[WORKER_VARIABLE];
  const worker = workerText === undefined ? undefined : Number(workerText);
  if (config.workers > 1 && worker === undefined) {
    if (process.versions.deno !== undefined) {
      throw new ConfigError(`PETSTORE_WORKERS is ${config.workers}: several workers on one port need Node's cluster module; on Deno run one process per port`);
    }
    return runWorkers(config, {
      entry,
      print: (line) => process.stdout.write(`${line}\n`),
      printError: (line) => process.stderr.write(`${line}\n`),
      listening: (port, baseUrl) => `${listeningLine(config, port, baseUrl)} with ${config.workers} workers`,
    });
  }
  const service = await startService(config, { worker });
  if (service.createdDevelopmentKey) {
    const { key, file } = service.createdDevelopmentKey;
    process.stdout.write(`\nCreated a development API key (also saved to ${file}):\n\n  ${key}\n\n`);
  }
  if (worker === undefined) process.stdout.write(`${listeningLine(config, service.port, service.baseUrl)}\n`);
  else process.send!({ type: 'petstore:listening', port: service.port, baseUrl: service.baseUrl } satisfies WorkerListening);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${worker === undefined ? '' : `worker ${worker}: `}${signal}: finishing requests in flight, then stopping\n`);
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Where this process listens, and the public base address when a deployment has its own. */
function listeningLine(config: Config, port: number, baseUrl: string): string {
  const local = localBaseUrl(config.host, port);
  return `petstore (${config.deployment}) listening on ${local}${baseUrl === local ? '' : ` (public base ${baseUrl})`}`;
}
