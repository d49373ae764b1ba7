#!/usr/bin/env node
// `npm test`'s Deno half: runs `deno task test` with the project's own Deno (the `deno` dev
// dependency), passes its output through, and ends with one plain summary line. Fails when the task
// fails or when it ran no test.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const deno = join(root, 'node_modules', '.bin', 'deno');
if (!existsSync(deno)) {
  console.error(`run-deno-tests: ${deno} is missing; run \`npm install\` (deno is a dev dependency)`);
  process.exit(1);
}

const child = spawn(deno, ['task', 'test'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
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
    console.error(`run-deno-tests: deno task test exited with ${code} before reporting any test`);
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
