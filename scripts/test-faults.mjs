#!/usr/bin/env node
// `npm run test:faults`: the service under load while SQLite's I/O fails at random, through Debian's
// libfiu (fiu-run, fiu-ctrl), installing fiu-utils first when it is missing; then while PostgreSQL is
// stopped at once and started again (a cluster of its own, from the machine's PostgreSQL binaries); then
// while the SQLite write lock is held by another process, and the PostgreSQL backend holding the append lock is stopped.
import { spawnSync } from 'node:child_process';

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(`test-faults: ${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
}

if (spawnSync('sh', ['-c', 'command -v fiu-run && command -v fiu-ctrl'], { stdio: 'ignore' }).status !== 0) {
  if (process.getuid?.() !== 0) {
    console.error('test-faults: fiu-run is missing; install it as root with: apt-get install -y fiu-utils');
    process.exit(1);
  }
  console.log('test-faults: installing libfiu (apt-get install -y fiu-utils)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], env);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'fiu-utils'], env);
}

run(process.execPath, [new URL('./run-tests.mjs', import.meta.url).pathname, 'tests/stress/storage-faults.stress.ts', 'tests/stress/postgres-outage.stress.ts', 'tests/stress/write-stalls.stress.ts']);
