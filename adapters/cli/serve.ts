import { loadConfig, localBaseUrl } from '../config/config.ts';
import { createLogger } from '../observability/logger.ts';
import { startService } from '../service.ts';

/**
 * Serves until SIGTERM or SIGINT, then finishes requests in flight and exits 0. Everything it says
 * goes through the logger (JSON lines unless a person is watching a terminal in development); the
 * development key is printed only to a terminal, never to a file or pipe that could keep it.
 */
export async function serve(environment: Record<string, string | undefined>, isTerminal = process.stdout.isTTY === true): Promise<void> {
  const config = loadConfig(environment);
  const logger = await createLogger(config, isTerminal);
  // Where it listens and that it stops are written at any PETSTORE_LOG_LEVEL: a supervisor waits for them.
  const notices = logger.child({}, { level: 'info' });
  const service = await startService(config, { logger });
  if (service.createdDevelopmentKey) {
    const { key, file } = service.createdDevelopmentKey;
    if (isTerminal) process.stdout.write(`\nCreated a development API key (also saved to ${file}):\n\n  ${key}\n\n`);
    else notices.info({ file }, `created a development API key, saved to ${file} (printed only to a terminal)`);
  }
  // Where this process listens, and the public base address when a deployment has its own.
  const local = localBaseUrl(config.host, service.port);
  notices.info(
    { deployment: config.deployment, url: local, ...(service.baseUrl === local ? {} : { publicBaseUrl: service.baseUrl }) },
    `petstore (${config.deployment}) listening on ${local}${service.baseUrl === local ? '' : ` (public base ${service.baseUrl})`}`,
  );
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
