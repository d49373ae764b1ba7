#!/usr/bin/env node
// Node 20's test runner neither expands globs nor finds .ts files in a folder by itself, and exits 0
// when it ran nothing. This lists tests/**/*.test.ts (or the paths given), runs them through tsx,
// and fails when no test ran. A file named on the command line runs whatever its suffix: that is how
// the heavier suites (tests/stress/*.stress.ts) run on their own, outside `npm test`.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function findTests(path, named = false) {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') || (named && path.endsWith('.ts')) ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => findTests(join(path, entry.name)));
}

const targets = process.argv.slice(2);
const files = (targets.length ? targets : [join(root, 'tests')]).flatMap((target) => findTests(target, true));
if (files.length === 0) {
  console.error('run-tests: no tests/**/*.test.ts files found');
  process.exit(1);
}

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', ...files.map((file) => relative(process.cwd(), file))],
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
    process.exit(1);
  }
  if (code !== 0 && failed === 0) console.error(`run-tests: the test runner exited with ${code}`);
  process.exit(code ?? 1);
});
