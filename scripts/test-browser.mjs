#!/usr/bin/env node
// Runs the browser tests (browser-tests/) in Debian's Chromium, installing it first when it is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(`test-browser: ${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
}

if (!existsSync(CHROMIUM)) {
  if (process.getuid?.() !== 0) {
    console.error(`test-browser: no Chromium at ${CHROMIUM}; install it as root with: apt-get install -y chromium`);
    process.exit(1);
  }
  console.log('test-browser: installing Chromium (apt-get install -y chromium)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], env);
  run('apt-get', ['install', '-y', '-qq', 'chromium'], env);
}

run(process.execPath, [new URL('./run-tests.mjs', import.meta.url).pathname, 'browser-tests']);
