#!/usr/bin/env node
// `npm start`: runs the bundled service (dist/) in this process. When a source changed since the last
// bundle, a child process first checks the configuration (a mistake is refused before any bundling),
// then rebuilds (scripts/build-service.mjs, well under a second): the bundler never takes memory here.
import { spawnSync } from 'node:child_process';
import { BUILD_SCRIPT, CONFIGURATION_REFUSED, bundleIsCurrent } from './service-bundle.mjs';

if (!bundleIsCurrent()) {
  const built = spawnSync(process.execPath, [BUILD_SCRIPT, '--check-configuration'], { stdio: 'inherit' });
  if (built.status !== 0) {
    if (built.status !== CONFIGURATION_REFUSED) process.stderr.write(`petstore: building the service failed (${built.error?.message ?? `exit ${built.status ?? built.signal}`})\n`);
    process.exit(1);
  }
}
await import('../dist/main.js');
