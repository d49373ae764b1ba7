import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NODE_TS_ARGS } from './processes.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
// The bin shim on Node; on Deno (which runs TypeScript itself) the CLI module directly.
const cliArgs = process.versions.deno === undefined ? [join(root, 'scripts', 'petstore.mjs')] : [...NODE_TS_ARGS, join(root, 'adapters', 'main.ts'), 'cli'];

/** The command line that runs `petstore <args>`: the program, then its arguments. */
export function petstoreCommandLine(args: readonly string[]): [string, string[]] {
  return [process.execPath, [...cliArgs, ...args]];
}

/** Runs `petstore <args>` as a process with extra environment; resolves with its exit code and output, whatever the code. */
export async function runPetstore(
  args: readonly string[], environment: Record<string, string>, options: { cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...cliArgs, ...args], { env: { ...process.env, ...environment }, ...options });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
