import { openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Deployment } from './deployments.ts';
import { STATEMENT_TIMEOUT_MS } from './deployments.ts';

/** A fault applied to a deployment and healed again; resolves with what it did, once healed. */
export interface Nemesis {
  readonly name: string;
  applies(deployment: Deployment): boolean;
  run(deployment: Deployment, random: () => number): Promise<string>;
}

/** How long a pause, a held lock or a full disk lasts: past the statement timeout, well within a client's. */
const HOLD_MS = STATEMENT_TIMEOUT_MS + 1000;
const hold = (ms = HOLD_MS) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** SIGKILL of an instance, restarted on the same port and store. */
const kill9: Nemesis = {
  name: 'kill-9',
  applies: () => true,
  async run(deployment, random) {
    const instance = pick(random, deployment.instances);
    const pid = instance.pid;
    await instance.kill9();
    const started = Date.now();
    await instance.restart();
    return `${instance.name} (pid ${pid}) killed with SIGKILL, restarted as pid ${instance.pid} in ${Date.now() - started} ms`;
  },
};

/** SIGSTOP of an instance, SIGCONT a few seconds later. */
const pauseInstance: Nemesis = {
  name: 'pause',
  applies: () => true,
  async run(deployment, random) {
    const instance = pick(random, deployment.instances);
    process.kill(instance.pid, 'SIGSTOP');
    try {
      await hold();
    } finally {
      process.kill(instance.pid, 'SIGCONT');
    }
    return `${instance.name} (pid ${instance.pid}) stopped for ${HOLD_MS} ms`;
  },
};

/** PostgreSQL stopped at once (`-m immediate`: a crash, recovery at the next start), and started again. */
const databaseRestart: Nemesis = {
  name: 'database-restart',
  applies: (deployment) => deployment.postgres !== undefined,
  async run(deployment) {
    const { cluster } = deployment.postgres!;
    const started = Date.now();
    await cluster.stop('immediate');
    await hold(500);
    await cluster.start();
    return `PostgreSQL stopped -m immediate and started again in ${Date.now() - started} ms`;
  },
};

/** SIGSTOP of the PostgreSQL backend that holds the append lock (an advisory lock held to the commit), SIGCONT a few seconds later. */
const backendPause: Nemesis = {
  name: 'backend-pause',
  applies: (deployment) => deployment.postgres !== undefined,
  async run(deployment) {
    const client = new pg.Client({ connectionString: deployment.postgres!.url });
    await client.connect();
    let pids: number[] = [];
    try {
      for (let attempt = 0; attempt < 500 && pids.length === 0; attempt++) {
        const { rows } = await client.query<{ pid: number }>("select pid from pg_locks where locktype = 'advisory' and granted");
        pids = rows.map((row) => row.pid).filter((pid) => pid !== (client as unknown as { processID: number }).processID);
      }
    } finally {
      await client.end();
    }
    if (pids.length === 0) return 'no backend held the append lock in 500 looks: nothing stopped';
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    try {
      await hold();
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
    }
    return `PostgreSQL backend ${pids.join(', ')} (holding the append lock) stopped for ${HOLD_MS} ms`;
  },
};

/** Past the statement timeout, the time to listen again, and a little more: the instance goes on without the stopped backend. */
const LISTENER_HOLD_MS = 2 * STATEMENT_TIMEOUT_MS + 1500;

/**
 * SIGSTOP of one instance's log listener (the backend of its connection named `petstore-log-listener`),
 * long enough for the instance to give it up and listen again on a new connection; SIGCONT after.
 */
const listenerPause: Nemesis = {
  name: 'listener-pause',
  applies: (deployment) => deployment.postgres !== undefined,
  async run(deployment, random) {
    const client = new pg.Client({ connectionString: deployment.postgres!.url });
    await client.connect();
    let pids: number[];
    try {
      const { rows } = await client.query<{ pid: number }>("select pid from pg_stat_activity where application_name = 'petstore-log-listener' and datname = current_database()");
      pids = rows.map((row) => row.pid);
    } finally {
      await client.end();
    }
    if (pids.length === 0) return 'no log listener connected: nothing stopped';
    const pid = pick(random, pids);
    const ms = LISTENER_HOLD_MS;
    process.kill(pid, 'SIGSTOP');
    try {
      await hold(ms);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    return `PostgreSQL backend ${pid} (one of ${pids.length} log listeners) stopped for ${ms} ms`;
  },
};
/** Another process holds SQLite's write lock (BEGIN IMMEDIATE) for longer than the statement timeout. */
const lock: Nemesis = {
  name: 'lock',
  applies: (deployment) => deployment.sqlite !== undefined,
  async run(deployment) {
    const database = new Database(deployment.sqlite!.file, { timeout: STATEMENT_TIMEOUT_MS });
    try {
      database.exec('BEGIN IMMEDIATE');
      await hold();
      database.exec('ROLLBACK');
    } finally {
      database.close();
    }
    return `SQLite's write lock held by the recorder (BEGIN IMMEDIATE) for ${HOLD_MS} ms`;
  },
};

/** The SQLite store's tmpfs filled to the last byte for a few seconds, then freed. */
const diskFull: Nemesis = {
  name: 'disk-full',
  applies: (deployment) => deployment.sqlite?.onTmpfs === true,
  async run(deployment) {
    const filler = join(deployment.sqlite!.directory, 'filler');
    const fd = openSync(filler, 'w');
    let written = 0;
    try {
      const chunk = Buffer.alloc(1 << 20, 1);
      for (;;) written += writeSync(fd, chunk);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    } finally {
      closeSync(fd);
    }
    try {
      await hold();
    } finally {
      rmSync(filler, { force: true });
    }
    return `the store's tmpfs filled (${Math.round(written / (1 << 20))} MB more) for ${HOLD_MS} ms`;
  },
};

export const NEMESES: readonly Nemesis[] = [kill9, pauseInstance, databaseRestart, backendPause, listenerPause, lock, diskFull];

export interface ScheduledNemesis {
  /** Seconds after the workload starts. */
  readonly at: number;
  readonly nemesis: Nemesis;
}

/**
 * The run's schedule: one fault about every 5 s from the second second on, each kind the deployment
 * allows in turn (in an order the seed decides), so that a short run still applies several kinds.
 */
export function scheduleNemeses(deployment: Deployment, seconds: number, random: () => number): ScheduledNemesis[] {
  const kinds = NEMESES.filter((nemesis) => nemesis.applies(deployment));
  const order = kinds.map((nemesis) => ({ nemesis, sort: random() })).sort((a, b) => a.sort - b.sort).map(({ nemesis }) => nemesis);
  const count = Math.max(2, Math.floor(seconds / 5));
  const span = Math.max(seconds - 5, 1);
  return Array.from({ length: count }, (_, index) => ({ at: 2 + (index * span) / Math.max(count - 1, 1), nemesis: order[index % order.length]! }));
}
