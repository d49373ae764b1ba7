#!/usr/bin/env node
// What a newcomer meets first, checked on the clone CI just installed: `npm ci`'s output (its log file,
// the first argument) warns of no install script, and `npm start` with a mistake in its configuration
// is refused, naming the variable, within about a second: before any bundling, and with a current bundle.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Measured beside a bare `node` started in the same run, so that a slow machine moves both: the refusal
// may take at most this much longer than Node takes to start at all (npm's own start-up is not counted).
const REFUSAL_BUDGET_MS = 1_000;
const failures = [];

const [installLog] = process.argv.slice(2);
if (installLog !== undefined) {
  const warnings = readFileSync(installLog, 'utf8').split('\n').filter((line) => /install-scripts|allowScripts/.test(line));
  if (warnings.length > 0) failures.push(`npm ci warned about install scripts:\n${warnings.join('\n')}`);
  else console.log('npm ci: no install-script warning');
}

function timed(args, environment = {}) {
  const began = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, ...environment }, encoding: 'utf8' });
  return { run, ms: Math.round(performance.now() - began) };
}

/** `npm start` runs `node <flags> scripts/start.mjs` (package.json): timed as that, beside a bare node. */
function refusal(label) {
  const startArgs = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start.split(/\s+/).slice(2);
  const bare = timed(['-e', '']);
  const { run, ms } = timed(startArgs, { PORT: '70000' });
  console.log(`PORT=70000 npm start (${label}): exit ${run.status} in ${ms} ms, a bare node ${bare.ms} ms: ${run.stderr.trim().split('\n').at(-1)}`);
  if (run.status !== 1 || !/PORT is invalid/.test(run.stderr)) failures.push(`${label}: expected exit 1 naming PORT, got ${run.status}: ${run.stderr}`);
  if (ms - bare.ms > REFUSAL_BUDGET_MS) failures.push(`${label}: refused ${ms - bare.ms} ms after a bare node's start (budget ${REFUSAL_BUDGET_MS} ms)`);
}

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
refusal('no bundle yet');
if (spawnSync(process.execPath, ['scripts/build-service.mjs'], { cwd: root, stdio: 'inherit' }).status !== 0) failures.push('npm run build failed');
refusal('bundle current');

if (failures.length > 0) {
  console.error(failures.join('\n'));
  process.exit(1);
}
