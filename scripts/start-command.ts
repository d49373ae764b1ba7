import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The arguments `npm start` gives node (package.json's start script, `exec node <flags> <script>`),
 * with the script's path made absolute: the benchmark and the tests start the service as it is deployed.
 * `exec` makes node replace npm's shell, so the SIGTERM npm passes on reaches the service. `checkout`:
 * another checkout's service (this one's by default), for comparing two versions in one run.
 */
export function npmStartNodeArgs(checkout = root): string[] {
  const { scripts } = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [command, ...args] = scripts.start.trim().replace(/^exec\s+/, '').split(/\s+/);
  if (command !== 'node') throw new Error(`package.json's start script runs ${command}, not node`);
  return args.map((arg) => (arg.startsWith('-') ? arg : join(checkout, arg)));
}

/** The public base (`http://…/v1`) a started service prints in its start line; rejects if it exits first. */
export function listeningBase(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const url = /listening on (http[^\s"\x1b]+)/.exec(stdout)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
  });
}
