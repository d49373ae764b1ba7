// `npm run check:history -- FILE`: checks a history file (JSON lines: invoke / ok / fail / info) against
// the pet store's model and prints one JSON object {valid, ops, anomalies, unusable}; exit 0 valid, 1 an
// anomaly, 2 not a history (then {valid: false, error}). On a terminal a short summary follows.
import { readFileSync } from 'node:fs';
import { checkHistory } from './check.ts';
import type { CheckResult } from './check.ts';
import { NotAHistory } from './history.ts';
import { summary } from './summary.ts';

const USAGE = `usage: npm run check:history -- FILE

Checks a history (JSON lines: invoke / ok / fail / info, as docs/reliability.md describes) and prints
one JSON line {valid, ops, anomalies, unusable}; on a terminal, a short summary after it.
Exit 0: valid; 1: an anomaly found; 2: FILE is not a history (or could not be read).`;

function main(args: readonly string[]): number {
  if (args.some((arg) => arg === '--help' || arg === '-h')) {
    console.log(USAGE);
    return 0;
  }
  const [file, ...rest] = args;
  if (file === undefined || rest.length > 0 || file.startsWith('-')) {
    console.error(USAGE);
    return 2;
  }
  let result: CheckResult;
  try {
    result = checkHistory(readFileSync(file, 'utf8'));
  } catch (error) {
    if (!(error instanceof NotAHistory) && (error as NodeJS.ErrnoException).code === undefined) throw error;
    const message = `not a history: ${(error as Error).message}`;
    console.log(JSON.stringify({ valid: false, error: message }));
    if (process.stdout.isTTY) console.log(`\n${file}: ${message}`);
    return 2;
  }
  console.log(JSON.stringify(result));
  if (process.stdout.isTTY) console.log(`\n${summary(file, result)}`);
  return result.valid ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
