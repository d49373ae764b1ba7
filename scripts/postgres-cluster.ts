// A throwaway PostgreSQL cluster for the tests: initdb + pg_ctl from the machine's PostgreSQL, in a
// temporary directory, on a free port of 127.0.0.1. initdb refuses to run as root, so as root every
// PostgreSQL command runs as the `postgres` user (runuser), which then owns the temporary directory.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

export interface PostgresCluster {
  /** The superuser's URL to the `postgres` database, e.g. postgres://postgres@127.0.0.1:54321/postgres */
  readonly url: string;
  readonly port: number;
  /** Where its files are. */
  readonly dataDirectory: string;
  /**
   * Stops the server, keeping its data: `fast` (the default) cuts connections and shuts down cleanly;
   * `immediate` stops every server process at once, as a crash would (recovery runs at the next start).
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port, waiting until it accepts connections. */
  start(): Promise<void>;
  /** Stops the server if it runs and removes every file; safe to call twice. */
  destroy(): Promise<void>;
}

const SEARCHED = '/usr/lib/postgresql';

/** The newest /usr/lib/postgresql/<version>/bin that has initdb and pg_ctl, if any. */
export function findPostgresBin(): string | undefined {
  if (!existsSync(SEARCHED)) return undefined;
  const versions = readdirSync(SEARCHED)
    .filter((version) => existsSync(join(SEARCHED, version, 'bin', 'initdb')) && existsSync(join(SEARCHED, version, 'bin', 'pg_ctl')))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  return versions[0] === undefined ? undefined : join(SEARCHED, versions[0], 'bin');
}

/** The uid and gid of `postgres` when we are root (initdb will not run as root), else undefined. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('running as root, and there is no `postgres` user to run the PostgreSQL test cluster as (initdb refuses root)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** More connections than the multi-instance tests open. */
const CONNECTION_SETTINGS = ['-c max_connections=300'];
/** Tuned for throwaway test data: no fsync. */
const TEST_SETTINGS = ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off', ...CONNECTION_SETTINGS];

export interface PostgresClusterOptions {
  /** Commits reach the disk before they are acknowledged (fsync and synchronous_commit on), as in production: for the benchmark. */
  readonly durable?: boolean;
  /** Runs the server (and every process it starts) on this core only. */
  readonly core?: number;
}

/** The server's process id (the postmaster's), once it runs. */
export function postmasterPid(cluster: PostgresCluster): number {
  return Number(readFileSync(join(cluster.dataDirectory, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
}

export async function startPostgresCluster(bin: string, options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const settings = options.durable ? CONNECTION_SETTINGS : TEST_SETTINGS;
  const user = postgresUser();
  const directory = mkdtempSync(join(tmpdir(), 'petstore-postgres-'));
  if (user) chownSync(directory, user.uid, user.gid);
  const data = join(directory, 'data');
  const log = join(directory, 'server.log');
  const as = async (command: string, args: string[]) => {
    const [unpinnedFile, unpinnedArgs] = user ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    const [file, fullArgs] = options.core === undefined ? [unpinnedFile, unpinnedArgs] : ['taskset', ['-c', String(options.core), unpinnedFile, ...unpinnedArgs]];
    try {
      await run(file, fullArgs, { cwd: directory, env: { ...process.env, LC_ALL: 'C' } });
    } catch (error) {
      const { stderr = '', stdout = '' } = error as { stderr?: string; stdout?: string };
      const serverLog = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
      throw new Error(`${command} ${args.join(' ')} failed:\n${stderr}${stdout}${serverLog}`, { cause: error });
    }
  };

  let port = 0;
  let running = false;
  const start = async () => {
    const serverOptions = [`-p ${port}`, `-k ${directory}`, '-c listen_addresses=127.0.0.1', ...settings].join(' ');
    await as('pg_ctl', ['-D', data, '-l', log, '-o', serverOptions, '-w', '-t', '60', 'start']);
    running = true;
  };
  const cluster: PostgresCluster = {
    get url() {
      return `postgres://postgres@127.0.0.1:${port}/postgres`;
    },
    get port() {
      return port;
    },
    dataDirectory: data,
    start,
    async stop(mode = 'fast') {
      await as('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      running = false;
      rmSync(directory, { recursive: true, force: true });
    },
  };

  try {
    await as('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    // A port found free can be taken before the server binds it: try another.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await start();
        break;
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
    return cluster;
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
}

/** What the tests are told about PostgreSQL, through the environment. */
export const TEST_POSTGRES_URL = 'PETSTORE_TEST_POSTGRES_URL';
export const TEST_POSTGRES_ENGINE = 'PETSTORE_TEST_POSTGRES';

/**
 * Runs `work` with a throwaway cluster whose URL is in PETSTORE_TEST_POSTGRES_URL, and removes the
 * cluster afterwards whatever `work` did. Without PostgreSQL binaries (or with PETSTORE_TEST_POSTGRES=pglite)
 * it says so and sets PETSTORE_TEST_POSTGRES=pglite instead: the tests then run on PGlite.
 */
export async function withTestPostgres<T>(work: (engine: 'server' | 'pglite') => Promise<T>, say: (line: string) => void): Promise<T> {
  if (process.env[TEST_POSTGRES_URL]) return work('server');
  const bin = process.env[TEST_POSTGRES_ENGINE] === 'pglite' ? undefined : findPostgresBin();
  if (!bin) {
    say(process.env[TEST_POSTGRES_ENGINE] === 'pglite'
      ? 'PostgreSQL tests: on PGlite, as PETSTORE_TEST_POSTGRES=pglite asks'
      : `PostgreSQL tests: no PostgreSQL binaries in ${SEARCHED}/*/bin (install Debian's postgresql package); falling back to PGlite`);
    process.env[TEST_POSTGRES_ENGINE] = 'pglite';
    return work('pglite');
  }
  const started = Date.now();
  const cluster = await startPostgresCluster(bin);
  say(`PostgreSQL tests: a throwaway cluster from ${bin} on port ${cluster.port} (${Date.now() - started} ms to start, as ${userInfo().uid === 0 ? 'postgres' : userInfo().username})`);
  const stopOnSignal = () => void cluster.destroy().finally(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  process.env[TEST_POSTGRES_URL] = cluster.url;
  try {
    return await work('server');
  } finally {
    delete process.env[TEST_POSTGRES_URL];
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
    await cluster.destroy();
  }
}
