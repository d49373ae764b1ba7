import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { NODE_TS_ARGS } from './processes.ts';

const root = resolve(import.meta.dirname, '..', '..');

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Its own fresh working directory. */
  readonly cwd: string;
  /** Resolves with the base address (…/v1) once it listens; rejects if it exits first. */
  readonly listening: Promise<string>;
  output(): { stdout: string; stderr: string };
  /** Kills it if still running and removes its working directory. */
  cleanup(): void;
}

/** `npm start`'s entry point as a real process, in a fresh working directory, with only `environment` (and PATH). */
export function startServiceProcess(environment: Record<string, string>): ServiceProcess {
  const cwd = mkdtempSync(join(tmpdir(), 'petstore-start-'));
  const child = spawn(process.execPath, [...NODE_TS_ARGS, join(root, 'adapters', 'main.ts')], {
    cwd,
    env: { PATH: process.env.PATH ?? '', PORT: '0', PETSTORE_LOG_LEVEL: 'silent', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const listening = new Promise<string>((resolveUrl, reject) => {
    child.stdout!.on('data', () => {
      const url = /listening on (\S+)/.exec(stdout)?.[1];
      if (url) resolveUrl(url);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
  });
  listening.catch(() => {}); // awaited only by the callers that expect it to listen
  return {
    child,
    cwd,
    listening,
    output: () => ({ stdout, stderr }),
    cleanup() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
