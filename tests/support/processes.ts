import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ensureDeno } from '../../scripts/run-deno-tests.mjs';

const root = new URL('../../', import.meta.url);
const denoConfig = fileURLToPath(new URL('deno.json', root));
const onDeno = process.versions.deno !== undefined;

/** node, running TypeScript through tsx. */
const nodeArgs: readonly string[] = ['--import', import.meta.resolve('tsx')];
/** deno run, with the project's deno.json and the permissions `deno task start` grants: a child runs as the service does. */
const denoArgs: readonly string[] = ['run', `--config=${denoConfig}`, ...denoStartPermissions()];

/**
 * Arguments that make a child of `process.execPath` run TypeScript, wherever its working directory
 * is: node's through tsx, or deno's when the tests run on Deno.
 */
export const NODE_TS_ARGS: readonly string[] = onDeno ? denoArgs : nodeArgs;

/** The runtime these tests are not running on, as a command that runs TypeScript (for checks across the two). */
export const OTHER_RUNTIME: { readonly command: string; readonly args: readonly string[] } = onDeno
  ? { command: 'node', args: nodeArgs }
  : {
    // The pinned Deno is installed on first use, by the first test that starts it.
    get command() {
      return ensureDeno();
    },
    args: denoArgs,
  };

function denoStartPermissions(): string[] {
  const { tasks } = JSON.parse(readFileSync(denoConfig, 'utf8')) as { tasks: { start: string } };
  return tasks.start.split(/\s+/).filter((word) => word.startsWith('--allow-'));
}
