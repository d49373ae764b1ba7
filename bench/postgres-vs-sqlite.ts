// The same service on PostgreSQL beside SQLite: a throwaway PostgreSQL cluster (durable: fsync and
// synchronous_commit on), pinned with the services to core 0, seeded with the SQLite seed's very rows;
// both services loaded in turn from core 1, rounds alternating which goes first.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openSqlite } from '../adapters/store/sqlite/open-sqlite.ts';
import { openPostgresPetStore } from '../adapters/store/postgres/postgres-pet-store.ts';
import { findPostgresBin, postmasterPid, startPostgresCluster } from '../scripts/postgres-cluster.ts';
import type { PostgresCluster } from '../scripts/postgres-cluster.ts';
import { canPin, cpuMicroseconds, headers, median, SCENARIOS, scenarioJob, startLoadClient, startService, stop } from './http-load.ts';
import type { LoadClient, Scenario, Started } from './http-load.ts';
import { seededCopy, seededFile } from './seed.ts';

export interface BackendOptions {
  readonly pets: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  /** Just these scenarios (by name); all when absent. */
  readonly only?: readonly string[] | undefined;
  /** Write a V8 CPU profile of each service into `sqlite/` and `postgres/` under this folder. */
  readonly profileDirectory?: string | undefined;
  readonly log: (line: string) => void;
}

export interface BackendScenario {
  readonly name: string;
  readonly label: string;
  /** The ratio PostgreSQL over SQLite this scenario should reach. */
  readonly goal: number;
}

export interface BackendFigures {
  readonly name: string;
  readonly label: string;
  readonly goal: number;
  readonly sqlite: { readonly median: number; readonly latencyP99Ms: number; readonly cpuPerRequestUs: number };
  /** `cpuPerRequestUs` is the service's; `databaseCpuPerRequestUs` PostgreSQL's server processes'. */
  readonly postgres: { readonly median: number; readonly latencyP99Ms: number; readonly cpuPerRequestUs: number; readonly databaseCpuPerRequestUs: number };
  /** Median PostgreSQL req/s over median SQLite req/s. */
  readonly ratio: number;
}

export interface BackendComparison {
  readonly pets: number;
  readonly connections: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly pinned: boolean;
  readonly scenarios: readonly BackendFigures[];
}

/** The HTTP comparison's scenarios, each with the ratio PostgreSQL over SQLite it should reach. */
const BACKEND_GOALS: Readonly<Record<string, number>> = { 'list-20': 0.8, 'list-100-available': 0.8, mix: 0.8, create: 0.6 };

export const BACKEND_SCENARIOS: readonly (Scenario & BackendScenario)[] = SCENARIOS
  .filter((scenario) => BACKEND_GOALS[scenario.name] !== undefined)
  .map((scenario) => ({ ...scenario, goal: BACKEND_GOALS[scenario.name]! }));

/** utime + stime of PostgreSQL's server and every process it runs or ran (backends, writers), in microseconds. */
export function clusterCpuMicroseconds(cluster: PostgresCluster): number {
  const postmaster = postmasterPid(cluster);
  const ticks = (fields: string[], from: number, to: number) => fields.slice(from, to + 1).reduce((sum, field) => sum + Number(field), 0);
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fields: string[];
    try {
      fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
    } catch {
      continue; // gone meanwhile
    }
    // Own time of the children alive now; the postmaster's own plus what its reaped children used.
    if (Number(entry) === postmaster) total += ticks(fields, 11, 14);
    else if (Number(fields[1]) === postmaster) total += ticks(fields, 11, 12);
  }
  return (total * 1e6) / 100;
}

/** Copies the SQLite seed's rows (log, read model, sequences) into the PostgreSQL database at `url`, migrated first. */
export async function seedPostgres(pets: number, url: string): Promise<void> {
  await (await openPostgresPetStore({ url, poolSize: 1, statementTimeoutMs: 0 })).close();
  const { db, database } = await openSqlite(await seededFile(pets), { migrate: false });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin');
    const events = database.prepare('select position, stream_id, stream_version, type, data, metadata, recorded_at from events where position > ? order by position limit 20000');
    for (let after = 0; ;) {
      const rows = events.all([after]) as { position: number; stream_id: string; stream_version: number; type: string; data: string; metadata: string; recorded_at: string }[];
      if (rows.length === 0) break;
      await client.query(
        `insert into events (position, stream_id, stream_version, type, data, metadata, recorded_at) overriding system value
         select * from unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::text[])`,
        (['position', 'stream_id', 'stream_version', 'type', 'data', 'metadata', 'recorded_at'] as const).map((column) => rows.map((row) => row[column])),
      );
      after = rows.at(-1)!.position;
    }
    const petRows = database.prepare('select id, name, category_id, status, version, created_at, updated_at from pets where id > ? order by id limit 20000');
    for (let after = 0; ;) {
      const rows = petRows.all([after]) as Record<string, unknown>[];
      if (rows.length === 0) break;
      await client.query(
        `insert into pets (id, name, category_id, status, version, created_at, updated_at)
         select * from unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::integer[], $6::text[], $7::text[])`,
        ['id', 'name', 'category_id', 'status', 'version', 'created_at', 'updated_at'].map((column) => rows.map((row) => row[column])),
      );
      after = rows.at(-1)!.id as number;
    }
    await client.query("select setval(pg_get_serial_sequence('events', 'position'), (select max(position) from events))");
    await client.query('select setval($1, $2)', ['pet_ids', pets]);
    await client.query('commit');
    await client.query('vacuum analyze');
  } finally {
    await client.end();
    await db.destroy();
  }
}

/**
 * The service on SQLite and on PostgreSQL, same seed, same scenarios: req/s, p99 and CPU time a request
 * (the service's on both sides, and PostgreSQL's own), median over the rounds; ratios PostgreSQL over SQLite.
 */
export async function runBackends(options: BackendOptions): Promise<BackendComparison> {
  const bin = findPostgresBin();
  if (!bin) throw new Error('the benchmark runs the service on PostgreSQL too, and found no PostgreSQL in /usr/lib/postgresql/*/bin: install Debian\'s postgresql package (apt-get install postgresql)');
  const pin = canPin();
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-backends-'));
  const started: Started[] = [];
  const client: LoadClient = startLoadClient(pin);
  const cluster = await startPostgresCluster(bin, { durable: true, ...(pin ? { core: 0 } : {}) });
  try {
    const url = cluster.url;
    const seeding = Date.now();
    await seedPostgres(options.pets, url);
    options.log(`PostgreSQL (${bin}, fsync and synchronous_commit on${pin ? ', core 0' : ''}) seeded with ${options.pets} pets in ${Date.now() - seeding} ms`);
    const postgresDirectory = mkdtempSync(join(directory, 'postgres-'));
    const profileOf = (name: string) => options.profileDirectory && join(options.profileDirectory, name);
    const [sqlite, postgres] = await Promise.all([
      seededCopy(options.pets, join(directory, 'petstore.db')).then((file) => startService(file, directory, pin, profileOf('sqlite'))),
      startService(url, postgresDirectory, pin, profileOf('postgres')),
    ]);
    started.push(sqlite, postgres);
    const targets = { sqlite, postgres } as const;

    const load = (target: Started, scenario: Scenario, seconds: number) =>
      client.run({ ...scenarioJob(scenario, options.pets, target.origin), headers, connections: options.connections, seconds });
    const chosen = BACKEND_SCENARIOS.filter((scenario) => options.only === undefined || options.only.includes(scenario.name));
    if (options.warmupSeconds > 0) for (const scenario of chosen) for (const target of [sqlite, postgres]) await load(target, scenario, options.warmupSeconds);

    type Run = { requestsPerSecond: number; latencyP99Ms: number; cpuPerRequestUs: number; databaseCpuPerRequestUs: number };
    const runs = new Map<string, Run[]>();
    for (let round = 0; round < options.rounds; round++) {
      for (const scenario of chosen) {
        const order = round % 2 === 0 ? (['sqlite', 'postgres'] as const) : (['postgres', 'sqlite'] as const);
        for (const name of order) {
          const cpuBefore = cpuMicroseconds(targets[name].child.pid!);
          const databaseBefore = clusterCpuMicroseconds(cluster);
          const result = await load(targets[name], scenario, options.seconds);
          const cpuPerRequestUs = (cpuMicroseconds(targets[name].child.pid!) - cpuBefore) / result.total;
          const databaseCpuPerRequestUs = (clusterCpuMicroseconds(cluster) - databaseBefore) / result.total;
          if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name} ${scenario.label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
          const key = `${scenario.name}/${name}`;
          runs.set(key, [...(runs.get(key) ?? []), { requestsPerSecond: result.requestsPerSecond, latencyP99Ms: result.latencyP99Ms, cpuPerRequestUs, databaseCpuPerRequestUs }]);
          options.log(`round ${round + 1}/${options.rounds} ${scenario.label} on ${name}: ${Math.round(result.requestsPerSecond)} req/s, ${cpuPerRequestUs.toFixed(1)} µs service CPU a request` +
            (name === 'postgres' ? ` + ${databaseCpuPerRequestUs.toFixed(1)} µs PostgreSQL` : ''));
        }
      }
    }
    const figures = (key: string) => {
      const each = runs.get(key)!;
      return {
        median: median(each.map((run) => run.requestsPerSecond)),
        latencyP99Ms: median(each.map((run) => run.latencyP99Ms)),
        cpuPerRequestUs: median(each.map((run) => run.cpuPerRequestUs)),
        databaseCpuPerRequestUs: median(each.map((run) => run.databaseCpuPerRequestUs)),
      };
    };
    const scenarios = chosen.map(({ name, label, goal }): BackendFigures => {
      const { databaseCpuPerRequestUs: _, ...onSqlite } = figures(`${name}/sqlite`);
      const onPostgres = figures(`${name}/postgres`);
      return { name, label, goal, sqlite: onSqlite, postgres: onPostgres, ratio: onPostgres.median / onSqlite.median };
    });
    return { pets: options.pets, connections: options.connections, rounds: options.rounds, seconds: options.seconds, pinned: pin, scenarios };
  } finally {
    client.stop();
    for (const each of started) await stop(each);
    await cluster.destroy();
    rmSync(directory, { recursive: true, force: true });
  }
}
