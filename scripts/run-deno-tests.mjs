#!/usr/bin/env node
// `npm test`'s Deno half: runs deno.json's `test` task with the project's pinned Deno, passes its
// output through, and ends with one plain summary line. Fails when the task fails or when it ran no
// test. The pinned Deno is installed on first use into node_modules/.cache (from npm, as the `deno`
// package), not by `npm install`: only the Deno tests need it. Tests that start Deno import ensureDeno.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DENO_VERSION = '2.9.5';

const root = fileURLToPath(new URL('..', import.meta.url));
const installed = join(root, 'node_modules', '.cache', `deno-${DENO_VERSION}`);
const deno = join(installed, 'node_modules', '.bin', 'deno');

/**
 * The pinned Deno's executable, installed first when it is missing. Safe to call from processes
 * running side by side: each installs into a folder of its own, and the first renamed into place wins.
 */
export function ensureDeno() {
  if (existsSync(deno)) return deno;
  mkdirSync(join(installed, '..'), { recursive: true });
  const staging = mkdtempSync(`${installed}.installing-`);
  try {
    console.error(`run-deno-tests: installing Deno ${DENO_VERSION} into ${installed} (once)`);
    const npm = spawnSync('npm', ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefer-offline', `deno@${DENO_VERSION}`], {
      stdio: ['ignore', 2, 2],
    });
    if (npm.status !== 0) throw new Error(`npm install deno@${DENO_VERSION} failed (${npm.error?.message ?? `exit ${npm.status ?? npm.signal}`})`);
    try {
      renameSync(staging, installed);
    } catch (error) {
      if (!existsSync(deno)) throw error;
    }
    return deno;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function runTests() {
  // The task's words after its `deno`: the task itself calls whichever `deno` is on the PATH.
  const { tasks } = JSON.parse(readFileSync(join(root, 'deno.json'), 'utf8'));
  const [, ...args] = tasks.test.trim().split(/\s+/);
  const child = spawn(ensureDeno(), args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
    process.stdout.write(chunk);
  });
  child.on('close', (code) => {
    // Deno ends with e.g. `ok | 13 passed (118 steps) | 0 failed (2s)`: tests are the describe blocks,
    // steps the `it`s inside them.
    const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
    const summary = /^(?:ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed(?: \((\d+) steps?\))?/m.exec(plain);
    if (!summary) {
      console.error(`run-deno-tests: deno test exited with ${code} before reporting any test`);
      process.exit(code || 1);
    }
    const passed = Number(summary[2] ?? summary[1]);
    const failed = Number(summary[4] ?? summary[3]);
    console.log(`deno: ${passed} passed, ${failed} failed`);
    if (code === 0 && passed === 0) {
      console.error('run-deno-tests: deno ran no test');
      process.exit(1);
    }
    process.exit(code ?? 1);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runTests();
