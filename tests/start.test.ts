import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startServiceProcess } from './support/service-process.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('npm start (the built service; on Deno, the sources as deno task start runs them)', () => {
  it('on a fresh checkout creates a development key, saves it 0600 under ./data, says where (never the key, with output redirected), and serves with it', async () => {
    const started = startServiceProcess({ PETSTORE_LOG_LEVEL: 'warn' });
    try {
      const baseUrl = await started.listening;
      const file = join(started.cwd, 'data', 'dev-api-key');
      const key = readFileSync(file, 'utf8').trim();
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.ok(statSync(join(started.cwd, 'data', 'petstore.db')).isFile());
      const created = await fetch(`${baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      });
      assert.equal(created.status, 201);
      started.signal('SIGTERM');
      assert.deepEqual(await started.exited, { code: 0, signal: null });
      const { stdout, stderr } = started.output();
      assert.ok(!stdout.includes(key) && !stderr.includes(key), 'the key is in neither stdout nor stderr');
      assert.equal(stderr, '');
      // Only JSON lines, the notices among them, whatever the level.
      const lines = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { level: number; msg: string; file?: string; url?: string; signal?: string });
      assert.deepEqual(lines.map((line) => [line.level, line.msg.replace(/\/.*/, '/')]), [
        [30, 'created a development API key, saved to data/'],
        [30, 'petstore (development) listening on http:/'],
        [30, 'SIGTERM: finishing requests in flight, then stopping'],
      ]);
      assert.equal(lines[0]!.file, join('data', 'dev-api-key'));
      assert.equal(`${lines[1]!.url}`, baseUrl);
      assert.equal(lines[1]!.msg, `petstore (development) listening on ${baseUrl} (API reference ${baseUrl}/docs)`);
      assert.equal(lines[2]!.signal, 'SIGTERM');
    } finally {
      started.cleanup();
    }
  });

  it('on a restart that reuses the saved development key, says where it is (never the key)', async () => {
    const first = startServiceProcess({ PETSTORE_LOG_LEVEL: 'warn' });
    const directory = first.cwd;
    let second: ReturnType<typeof startServiceProcess> | undefined;
    try {
      await first.listening;
      first.signal('SIGTERM');
      await first.exited;
      second = startServiceProcess({ PETSTORE_LOG_LEVEL: 'warn' }, { cwd: directory });
      await second.listening;
      const key = readFileSync(join(directory, 'data', 'dev-api-key'), 'utf8').trim();
      const [notice] = second.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as { msg: string; file?: string });
      assert.equal(notice!.msg, `the development API key saved at an earlier start is in ${join('data', 'dev-api-key')}`);
      assert.equal(notice!.file, join('data', 'dev-api-key'));
      assert.ok(!second.stdout().includes(key), 'the key is not printed');
    } finally {
      second?.signal('SIGTERM');
      await second?.exited;
      first.cleanup();
    }
  });

  it('prints the development key when its output is a terminal', async () => {
    const started = startServiceProcess({}, { terminal: true });
    try {
      await started.listening;
      const key = readFileSync(join(started.cwd, 'data', 'dev-api-key'), 'utf8').trim();
      assert.match(started.stdout(), new RegExp(`Created a development API key \\(also saved to data/dev-api-key\\):\\s+${key}\\s`));
    } finally {
      started.cleanup();
    }
  });

  it('finishes a request in flight on SIGINT and exits 0', async () => {
    const started = startServiceProcess({ PETSTORE_API_KEYS: 'k'.repeat(20) });
    try {
      const baseUrl = await started.listening;
      const pending = fetch(`${baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${'k'.repeat(20)}`, 'content-type': 'application/json' },
        body: new ReadableStream({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode('{"name":"Rex",'));
            await new Promise((resolveWait) => setTimeout(resolveWait, 300));
            started.signal('SIGINT');
            await new Promise((resolveWait) => setTimeout(resolveWait, 300));
            controller.enqueue(new TextEncoder().encode('"categoryId":1}'));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      const response = await pending;
      assert.equal(response.status, 201);
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 0);
    } finally {
      started.cleanup();
    }
  });

  it('on SIGTERM answers /readyz 503 at once, serves through PETSTORE_SHUTDOWN_DELAY_MS, then exits 0', async () => {
    const started = startServiceProcess({ PETSTORE_API_KEYS: 'k'.repeat(20), PETSTORE_SHUTDOWN_DELAY_MS: '1000' });
    try {
      const baseUrl = await started.listening;
      const origin = new URL(baseUrl).origin;
      assert.equal((await fetch(`${origin}/readyz`)).status, 200);
      started.signal('SIGTERM');
      // The signal arrives asynchronously: ask until the service has heard it (it answers throughout the delay).
      let readiness = await fetch(`${origin}/readyz`);
      while (readiness.status === 200) readiness = await fetch(`${origin}/readyz`);
      assert.equal(readiness.status, 503);
      assert.equal((await fetch(`${origin}/livez`)).status, 200);
      assert.equal((await fetch(`${baseUrl}/pets`, { headers: { authorization: `Bearer ${'k'.repeat(20)}` } })).status, 200);
      assert.deepEqual(await started.exited, { code: 0, signal: null });
    } finally {
      started.cleanup();
    }
  });

  it('refuses to start in production without a key, naming the variable', async () => {
    const started = startServiceProcess({ PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'https://api.example.com/v1' });
    try {
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 1);
      assert.match(started.output().stderr, /PETSTORE_API_KEYS/);
    } finally {
      started.cleanup();
    }
  });

  it('refuses a bad variable with a message naming it', async () => {
    const started = startServiceProcess({ PORT: 'abc' });
    try {
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 1);
      assert.match(started.output().stderr, /configuration error: PORT is invalid/);
    } finally {
      started.cleanup();
    }
  });

  it('refuses a port in use naming PORT, without a stack', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const started = startServiceProcess({ PORT: String(port) });
    try {
      assert.equal((await started.exited).code, 1);
      const { stderr } = started.output();
      assert.match(stderr, new RegExp(`^configuration error: PORT ${port} is already in use on 127\\.0\\.0\\.1: .*another PORT`));
      assert.doesNotMatch(stderr, /EADDRINUSE|\n\s+at /);
    } finally {
      started.cleanup();
      taken.close();
    }
  });

  it('refuses an unreachable PostgreSQL naming PETSTORE_DATABASE and the reason, never its password, without a stack', async () => {
    // A port nothing listens on: taken, then given back.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const started = startServiceProcess({ PETSTORE_DATABASE: `postgres://petstore:hunter2@127.0.0.1:${port}/petstore` });
    try {
      assert.equal((await started.exited).code, 1);
      const { stdout, stderr } = started.output();
      assert.match(stderr, new RegExp(`cannot reach PostgreSQL at postgres://petstore:\\*\\*\\*@127\\.0\\.0\\.1:${port}/petstore \\(PETSTORE_DATABASE\\): connect ECONNREFUSED`));
      assert.doesNotMatch(stdout + stderr, /hunter2|\n\s+at /);
    } finally {
      started.cleanup();
    }
  });

  it('refuses a database URL of a kind it does not speak, making no file or folder of it', async () => {
    const started = startServiceProcess({ PETSTORE_DATABASE: 'mysql://x' });
    try {
      assert.equal((await started.exited).code, 1);
      assert.match(started.output().stderr, /^configuration error: PETSTORE_DATABASE is invalid: /);
      assert.deepEqual(readdirSync(started.cwd), []);
    } finally {
      started.cleanup();
    }
  });

  it('refuses a bad key naming PETSTORE_API_KEYS and its position, printing no key', async () => {
    const started = startServiceProcess({ PETSTORE_API_KEYS: 'prod-secret-key-0123456789abcdef,bad!key' });
    try {
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 1);
      const { stdout, stderr } = started.output();
      assert.match(stderr, /configuration error: PETSTORE_API_KEYS is invalid: the 2nd of its 2 comma-separated keys/);
      assert.doesNotMatch(stdout + stderr, /prod-secret|bad!key/);
    } finally {
      started.cleanup();
    }
  });

  it('stops entirely on SIGTERM to the npm start process itself: every process it started exits and the port closes', async () => {
    const directory = temporaryDirectory('npm-start');
    // npm, not the node it runs: npm passes SIGTERM to its shell, which must have become the service (exec).
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? directory.path, PORT: '0', PETSTORE_LOG_LEVEL: 'silent', PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: 'k'.repeat(20) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let started: number[] = [];
    try {
      let output = '';
      npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const exited = once(npm, 'exit');
      const port = await new Promise<number>((resolvePort, reject) => {
        npm.stdout!.on('data', () => {
          const found = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
          if (found) resolvePort(Number(found));
        });
        void exited.then(() => reject(new Error(`npm start exited before listening: ${output}`)));
      });
      started = descendantsOf(npm.pid!);
      assert.ok(started.length >= 1, 'npm start runs the service in a process of its own');
      assert.equal(await portAnswers(port), true);

      process.kill(npm.pid!, 'SIGTERM');
      const [code, signal] = await exited;
      assert.ok(code === 0 || signal === 'SIGTERM', `npm exited with ${code ?? signal}`);
      const left = await waitUntil(() => stillRunning(started), (running) => running.length === 0);
      assert.deepEqual(left, [], 'every process npm start started has exited');
      assert.equal(await portAnswers(port), false, 'the port is closed');
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      // A process npm left behind is no longer below it: end those it started, by their ids.
      for (const pid of stillRunning([...started, ...descendantsOf(npm.pid!)])) process.kill(pid, 'SIGKILL');
      directory.remove();
    }
  });
});

/** Every process on the machine with its parent, and whether it still runs (a zombie waits only to be reaped). */
function processTable(): { pid: number; parent: number; running: boolean }[] {
  return execFileSync('ps', ['-e', '-o', 'pid=,ppid=,stat='], { encoding: 'utf8' }).trim().split('\n').map((line) => {
    const [pid, parent, state] = line.trim().split(/\s+/);
    return { pid: Number(pid), parent: Number(parent), running: !state!.startsWith('Z') };
  });
}

/** Every process below `pid`. */
function descendantsOf(pid: number): number[] {
  const table = processTable();
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const entry of table) if (entry.parent === parent) (found.push(entry.pid), walk(entry.pid));
  };
  walk(pid);
  return found;
}

function stillRunning(pids: readonly number[]): number[] {
  const running = new Set(processTable().filter((entry) => entry.running).map((entry) => entry.pid));
  return pids.filter((pid) => running.has(pid));
}

/** Asks `read` again every 50 ms until `done` holds or 10 s have passed; returns the last answer. */
async function waitUntil<T>(read: () => T, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolveConnect) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolveConnect(true)));
    socket.once('error', () => resolveConnect(false));
  });
}
