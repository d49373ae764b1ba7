#!/usr/bin/env node
// `npm start`: builds the service into dist/ (scripts/build-service.mjs, well under a second), then
// runs it in this process. The build runs in a child process, so the bundler never takes memory here.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const built = spawnSync(process.execPath, [fileURLToPath(new URL('build-service.mjs', import.meta.url))], { stdio: 'inherit' });
if (built.status !== 0) {
  process.stderr.write(`petstore: building the service failed (${built.error?.message ?? `exit ${built.status ?? built.signal}`})\n`);
  process.exit(1);
}
await import('../dist/main.js');
