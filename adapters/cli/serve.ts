import { loadConfig, localBaseUrl } from '../config/config.ts';
import { startService } from '../service.ts';

/** Serves until SIGTERM or SIGINT, then finishes requests in flight and exits 0. */
export async function serve(environment: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(environment);
  const service = await startService(config);
  if (service.createdDevelopmentKey) {
    const { key, file } = service.createdDevelopmentKey;
    process.stdout.write(`\nCreated a development API key (also saved to ${file}):\n\n  ${key}\n\n`);
  }
  // Where this process listens, and the public base address when a deployment has its own.
  const local = localBaseUrl(config.host, service.port);
  process.stdout.write(`petstore (${config.deployment}) listening on ${local}${service.baseUrl === local ? '' : ` (public base ${service.baseUrl})`}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: finishing requests in flight, then stopping\n`);
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
