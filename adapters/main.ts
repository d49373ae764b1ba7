import { fileURLToPath } from 'node:url';
import { ConfigError } from './config/config-error.ts';
import { DatabaseUnusable } from './store/database-unusable.ts';

// The one process entry, and the one reader of the environment: run bare (`npm start`, `deno task
// start`) it serves; the `petstore` command runs it as `main.ts cli <command line>`.
const [first, ...rest] = process.argv.slice(2);
const environment = process.env;

if (first === 'cli') {
  const { runCli } = await import('./cli/main.ts');
  process.exitCode = await runCli(rest, environment);
} else {
  const { serve } = await import('./cli/serve.ts');
  serve(environment, { entry: fileURLToPath(import.meta.url) }).catch((error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`configuration error: ${error.message}\n`);
    else if (error instanceof DatabaseUnusable) process.stderr.write(`petstore failed to start: ${error.message}\n`);
    else process.stderr.write(`petstore failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
