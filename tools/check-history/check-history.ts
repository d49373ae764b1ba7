// `npm run check:history -- FILE`: checks a history file (JSON lines: invoke / ok / fail / info) against
// the pet store's model and prints one JSON object {valid, ops, anomalies}; exit 0 valid, 1 an anomaly,
// 2 not a history (then {valid: false, error}).
import { readFileSync } from 'node:fs';
import { checkHistory } from './check.ts';
import type { CheckResult } from './check.ts';
import { NotAHistory } from './history.ts';

function main(file: string | undefined): number {
  if (file === undefined) {
    console.error('usage: npm run check:history -- FILE');
    return 2;
  }
  let result: CheckResult;
  try {
    result = checkHistory(readFileSync(file, 'utf8'));
  } catch (error) {
    if (!(error instanceof NotAHistory) && (error as NodeJS.ErrnoException).code === undefined) throw error;
    console.log(JSON.stringify({ valid: false, error: `not a history: ${(error as Error).message}` }));
    return 2;
  }
  console.log(JSON.stringify(result));
  return result.valid ? 0 : 1;
}

process.exitCode = main(process.argv[2]);
