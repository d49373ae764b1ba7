import { ConfigError } from './config.ts';
import { serve } from './cli/serve.ts';

/** `npm start`: the same as `petstore serve`. */
serve(process.env).catch((error: unknown) => {
  process.stderr.write(error instanceof ConfigError ? `configuration error: ${error.message}\n` : `petstore failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
