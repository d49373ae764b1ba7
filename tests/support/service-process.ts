import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { npmStartNodeArgs } from '../../scripts/start-command.ts';
import { NODE_TS_ARGS } from './processes.ts';
import { temporaryDirectory } from './temporary-store.ts';

const MAIN = fileURLToPath(new URL('../../adapters/main.ts', import.meta.url));
/** What `npm start` runs on Node (it builds the service, then runs it); on Deno, the sources as `deno task start` runs them. */
const START_ARGS = process.versions.deno === undefined ? npmStartNodeArgs() : [...NODE_TS_ARGS, MAIN];

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Its working directory: the one given, or a fresh one that `cleanup` removes. */
  readonly cwd: string;
  /** Resolves with the base address (…/v1) once the service listens; rejects if it exits first. */
  readonly listening: Promise<string>;
  /** Resolves when the process has exited, with its code (null when killed by a signal) and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
  output(): { stdout: string; stderr: string };
  /**
   * Sends a signal by pid: Deno's child_process reports a child it signalled itself as killed by that
   * signal even when the child caught it and exited 0.
   */
  signal(name: NodeJS.Signals): void;
  /** Kills it if still running and removes the working directory it was given by default. */
  cleanup(): void;
}

/**
 * The service as `npm start` runs it, a real process, with only the environment given (plus PATH, a
 * free port, silent logs). With `terminal`, its output is a terminal (util-linux `script` gives it a
 * pseudo-terminal), as for a person running it by hand. A `wrapper` (e.g. `fiu-run -x`) must exec the
 * command it is given, so that the child's pid stays the service's.
 */
export function startServiceProcess(
  environment: Record<string, string>, options: { cwd?: string; terminal?: boolean; wrapper?: readonly string[] } = {},
): ServiceProcess {
  const ownDirectory = options.cwd === undefined ? temporaryDirectory('start') : undefined;
  const cwd = options.cwd ?? ownDirectory!.path;
  const service = [...(options.wrapper ?? []), process.execPath, ...START_ARGS];
  const [command, args] = options.terminal
    ? ['script', ['-qec', ['exec', ...service].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' '), '/dev/null']] as const
    : [service[0]!, service.slice(1)] as const;
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', PORT: '0', PETSTORE_LOG_LEVEL: 'silent', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
  const listening = new Promise<string>((resolveUrl, reject) => {
    const onData = () => {
      const url = /listening on (http[^\s"\x1b]+)/.exec(stdout)?.[1];
      if (url) {
        child.stdout!.off('data', onData);
        resolveUrl(url);
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => reject(new Error(`the service exited (${code ?? signal}) before listening: ${stderr}`)));
  });
  listening.catch(() => {}); // awaited only by callers that expect it to listen
  return {
    child,
    cwd,
    listening,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => ({ stdout, stderr }),
    signal: (name) => process.kill(child.pid!, name),
    cleanup() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      ownDirectory?.remove();
    },
  };
}
