#!/usr/bin/env node
// Node 20's test runner neither expands globs nor finds .ts files in a folder by itself, and exits 0
// when it ran nothing. This lists tests/**/*.test.ts (or the paths given), runs them through tsx,
// and fails when no test ran. A file named on the command line runs whatever its suffix: that is how
// the heavier suites (tests/stress/*.stress.ts) run on their own, outside `npm test`.
// When a PostgreSQL test is among them, they run with a throwaway
// PostgreSQL cluster (see scripts/postgres-cluster.ts), removed afterwards whatever the outcome.
// The files of tests/**/*.test.ts run side by side, as many at a time as the machine has cores (at least 2;
// PETSTORE_TEST_CONCURRENCY overrides): most of a file's time is spent waiting on child processes, sockets
// and timers. Any other file among them (a stress suite, the browser tests) makes them run one at a time.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, sep } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function findTests(path, named = false) {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') || (named && path.endsWith('.ts')) ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => findTests(join(path, entry.name)));
}

const targets = process.argv.slice(2);
let files = (targets.length ? targets : [join(root, 'tests')]).flatMap((target) => findTests(target, true));
if (files.length === 0) {
  console.error('run-tests: no tests/**/*.test.ts files found');
  process.exit(1);
}

/** Files under tests/postgres/ and tests/contract/postgres.test.ts need PostgreSQL; those under tests/postgres/server/ a real server. */
const inTests = (file) => relative(join(root, 'tests'), file).split(sep);
const needsPostgres = (file) => inTests(file)[0] === 'postgres' || inTests(file).at(-1) === 'postgres.test.ts';
const needsServer = (file) => inTests(file)[0] === 'postgres' && inTests(file)[1] === 'server';

function concurrencyFor(selected) {
  if (!selected.every((file) => file.endsWith('.test.ts') && inTests(file)[0] !== '..')) return 1;
  return Number(process.env.PETSTORE_TEST_CONCURRENCY) || Math.max(2, availableParallelism());
}

function runTests(selected) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', `--test-concurrency=${concurrencyFor(selected)}`, '--test-reporter=spec', ...selected.map((file) => relative(process.cwd(), file))],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      process.stdout.write(chunk);
    });
    child.on('close', (code) => {
      const passed = Number(/^ℹ pass (\d+)/m.exec(output)?.[1] ?? 0);
      const failed = Number(/^ℹ fail (\d+)/m.exec(output)?.[1] ?? 0);
      if (code === 0 && passed === 0) {
        console.error('run-tests: the test runner ran no test');
        resolve(1);
        return;
      }
      if (code !== 0 && failed === 0) console.error(`run-tests: the test runner exited with ${code}`);
      resolve(code ?? 1);
    });
  });
}

let code;
if (files.some(needsPostgres)) {
  const { register } = await import('tsx/esm/api');
  register();
  const { withTestPostgres } = await import('./postgres-cluster.ts');
  code = await withTestPostgres(async (engine) => {
    if (engine === 'pglite') {
      const notRun = files.filter(needsServer);
      for (const file of notRun) console.error(`run-tests: NOT RUN on PGlite (needs a PostgreSQL server): ${relative(root, file)}`);
      files = files.filter((file) => !needsServer(file));
    }
    return runTests(files);
  }, (line) => console.error(`run-tests: ${line}`));
} else {
  code = await runTests(files);
}
process.exit(code);
