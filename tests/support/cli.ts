import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const cli = join(resolve(import.meta.dirname, '..', '..'), 'scripts', 'petstore.mjs');

/** Runs `petstore <args>` as a process with extra environment; resolves with its exit code and output, whatever the code. */
export async function runPetstore(args: readonly string[], environment: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], { env: { ...process.env, ...environment } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
