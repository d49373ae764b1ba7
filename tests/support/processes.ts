import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const denoConfig = fileURLToPath(new URL('../../deno.json', import.meta.url));

/**
 * Arguments that make a child of `process.execPath` run TypeScript, wherever its working directory
 * is. On Node: node through tsx. On Deno (the tests' Deno run): `deno run` with the project's
 * deno.json and the permissions `deno task start` grants, so a child runs as the service does there.
 */
export const NODE_TS_ARGS: readonly string[] = process.versions.deno === undefined
  ? ['--import', import.meta.resolve('tsx')]
  : ['run', `--config=${denoConfig}`, ...denoStartPermissions()];

function denoStartPermissions(): string[] {
  const { tasks } = JSON.parse(readFileSync(denoConfig, 'utf8')) as { tasks: { start: string } };
  return tasks.start.split(/\s+/).filter((word) => word.startsWith('--allow-'));
}
