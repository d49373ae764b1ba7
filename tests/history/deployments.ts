import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { freePort } from '../../scripts/free-port.ts';
import { findPostgresBin, startPostgresCluster } from '../../scripts/postgres-cluster.ts';
import type { PostgresCluster } from '../../scripts/postgres-cluster.ts';
import { startServiceProcess } from '../support/service-process.ts';
import type { ServiceProcess } from '../support/service-process.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';
import type { TemporaryDirectory } from '../support/temporary-store.ts';

export const HISTORY_KEY = 'history-recorder-key-0123456789';
/** Shorter than the default, so that a held lock or a stalled database reaches its 503 well within a client's timeout. */
export const STATEMENT_TIMEOUT_MS = 2000;
/** A bound on a restart, so that a service that never listens again ends the run instead of hanging it. */
const RESTART_BOUND_MS = 60_000;
/** The tmpfs a SQLite store lives on when the machine allows one, so that the disk can be filled. */
const TMPFS_MB = 256;

/** One service process, on a port of its own that it keeps across restarts. */
export interface Instance {
  readonly name: string;
  readonly base: string;
  readonly pid: number;
  /** Kills it with SIGKILL and waits for it to be gone. */
  kill9(): Promise<void>;
  /** Starts it again on the same port and store; resolves once it listens. */
  restart(): Promise<void>;
  close(): void;
}

export interface Deployment {
  readonly backend: 'sqlite' | 'postgres';
  readonly instances: readonly Instance[];
  /** SQLite: the database file and the directory it lives in, with whether that is a tmpfs of its own. */
  readonly sqlite?: { readonly file: string; readonly directory: string; readonly onTmpfs: boolean };
  /** PostgreSQL: the throwaway cluster and the database's URL. */
  readonly postgres?: { readonly cluster: PostgresCluster; readonly url: string };
  close(): Promise<void>;
}

/** Every instance serves one public base, so that the events they serve (whose `source` is that base) are equal. */
function environment(database: string, port: number): Record<string, string> {
  return {
    PETSTORE_DATABASE: database,
    PETSTORE_API_KEYS: HISTORY_KEY,
    PETSTORE_ENV: 'staging',
    PETSTORE_STAGING_URL: 'http://history.test/v1',
    PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    PORT: String(port),
  };
}

async function startInstance(name: string, database: string): Promise<Instance> {
  const port = await freePort();
  let service: ServiceProcess = startServiceProcess(environment(database, port));
  const base = await service.listening;
  return {
    name,
    base,
    get pid() {
      return service.child.pid!;
    },
    async kill9() {
      service.signal('SIGKILL');
      await service.exited;
      service.cleanup();
    },
    async restart() {
      service = startServiceProcess(environment(database, port));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name} did not listen again within ${RESTART_BOUND_MS / 1000} s: ${service.stderr().slice(-2000)}`)), RESTART_BOUND_MS);
      });
      await Promise.race([service.listening, late]).finally(() => clearTimeout(timer));
    },
    close: () => service.cleanup(),
  };
}

/** One instance on a SQLite file, on a tmpfs of its own when this process may mount one (root). */
export async function sqliteDeployment(): Promise<Deployment> {
  const directory = temporaryDirectory('history-sqlite');
  const onTmpfs = mountTmpfs(directory);
  const file = directory.file('petstore.db');
  const instances: Instance[] = [];
  const close = async () => {
    for (const instance of instances) instance.close();
    if (onTmpfs) execFileSync('umount', ['-l', directory.path]);
    directory.remove();
  };
  try {
    instances.push(await startInstance('sqlite-0', file));
    return { backend: 'sqlite', instances, sqlite: { file, directory: directory.path, onTmpfs }, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function mountTmpfs(directory: TemporaryDirectory): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'petstore-history', directory.path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Three instances on one database of a throwaway PostgreSQL cluster, started one after the other (the first migrates). */
export async function postgresDeployment(count = 3): Promise<Deployment> {
  const bin = findPostgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries in /usr/lib/postgresql/*/bin: install Debian\'s postgresql package');
  // Durable as in production: with synchronous_commit off, a crash (the database-restart nemesis) loses acknowledged commits.
  const cluster = await startPostgresCluster(bin, { durable: true });
  const instances: Instance[] = [];
  const close = async () => {
    for (const instance of instances) instance.close();
    await cluster.destroy();
  };
  try {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('create database petstore_history');
    await admin.end();
    const url = new URL(cluster.url);
    url.pathname = '/petstore_history';
    for (let index = 0; index < count; index++) instances.push(await startInstance(`postgres-${index}`, url.toString()));
    return { backend: 'postgres', instances, postgres: { cluster, url: url.toString() }, close };
  } catch (error) {
    await close();
    throw error;
  }
}
