// `node --import tsx bench/start-flags.ts '{"now":[],"lean":["--heap-growing-percent=25"]}' [repeats] [create,mix] [postgres]`:
// the service started with each set of node flags (beside npm start's own, each set last so it wins;
// an entry NAME=value is put in the service's environment instead) in
// turn, rounds alternating which goes first, given the same work each (the side-by-side run's listings,
// creations and mix over 10,000 pets, a fixed number of answers a scenario, three rounds): its peak
// resident memory, where the memory lay at that peak, its full and young collections' pauses, and the
// req/s and CPU a request of each scenario, medians. For choosing npm start's flags. With `postgres`, each
// service runs on its own copy of the pets in a throwaway durable cluster on the services' core, and the
// cluster's CPU a request is printed after the service's.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { findPostgresBin, startPostgresCluster } from '../scripts/postgres-cluster.ts';
import type { PostgresCluster } from '../scripts/postgres-cluster.ts';
import { clusterCpuMicroseconds, seedPostgres } from './postgres-vs-sqlite.ts';
import { canPin, cpuMicroseconds, headers, median, memoryLine, scenarioJob, SCENARIOS, startLoadClient, startService, stop } from './http-load.ts';
import type { MemorySample } from './http-load.ts';
import { seededCopy } from './seed.ts';

const PETS = 10_000;
const ANSWERS: Readonly<Record<string, number>> = { 'list-20': 70_000, 'list-100-available': 70_000, create: 40_000, mix: 50_000 };
const ROUNDS = 3;

const variants = Object.entries(JSON.parse(process.argv[2] ?? '{"as npm start runs it":[]}') as Record<string, string[]>);
const repeats = Number(process.argv[3] ?? 1);
const pin = canPin();
const client = startLoadClient(pin);
const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-flags-'));
const only = process.argv[4]?.split(',');
const scenarios = SCENARIOS.filter((scenario) => ANSWERS[scenario.name] !== undefined && (only === undefined || only.includes(scenario.name)));
interface Figures { peaks: number[]; rates: Map<string, number[]>; cpu: Map<string, number[]>; databaseCpu: Map<string, number[]> }
const figures = new Map<string, Figures>();
const log = (line: string) => process.stdout.write(`${line}\n`);
let cluster: PostgresCluster | undefined;
/** A database of the seeded pets for one service (a copy of the cluster's seeded one), or a copy of the SQLite seed. */
async function freshDatabase(name: string): Promise<string> {
  if (cluster === undefined) return seededCopy(PETS, join(directory, `${name}.db`));
  const admin = new pg.Client({ connectionString: cluster.url.replace(/\/postgres$/, '/template1') });
  await admin.connect();
  await admin.query(`create database ${name} template postgres`).finally(() => admin.end());
  return cluster.url.replace(/\/postgres$/, `/${name}`);
}
try {
  if (process.argv[5] === 'postgres') {
    cluster = await startPostgresCluster(findPostgresBin()!, { durable: true, ...(pin ? { core: 0 } : {}) });
    await seedPostgres(PETS, cluster.url);
  }
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const [name, flags] of repeat % 2 === 0 ? variants : [...variants].reverse()) {
      const probe = join(directory, `probe-${repeat}-${variants.findIndex(([each]) => each === name)}.json`);
      const database = await freshDatabase(`petstore_${repeat}_${variants.findIndex(([each]) => each === name)}`);
      const environment = Object.fromEntries(flags.filter((flag) => !flag.startsWith('-')).map((entry) => entry.split(/=(.*)/s).slice(0, 2) as [string, string]));
      const service = await startService(database, directory, pin, undefined, environment, probe, flags.filter((flag) => flag.startsWith('-')));
      const each: Figures = figures.get(name) ?? { peaks: [], rates: new Map(), cpu: new Map(), databaseCpu: new Map() };
      figures.set(name, each);
      for (const scenario of scenarios) await client.run({ ...scenarioJob(scenario, PETS, service.origin), headers, connections: 64, seconds: 1 });
      for (let round = 0; round < ROUNDS; round++) {
        for (const scenario of scenarios) {
          const cpuBefore = cpuMicroseconds(service.child.pid!);
          const databaseBefore = cluster === undefined ? 0 : clusterCpuMicroseconds(cluster);
          const result = await client.run({ ...scenarioJob(scenario, PETS, service.origin), headers, connections: 64, seconds: 60, amount: ANSWERS[scenario.name]! });
          if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name} ${scenario.label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
          each.rates.set(scenario.name, [...(each.rates.get(scenario.name) ?? []), result.requestsPerSecond]);
          each.cpu.set(scenario.name, [...(each.cpu.get(scenario.name) ?? []), (cpuMicroseconds(service.child.pid!) - cpuBefore) / result.total]);
          if (cluster !== undefined) each.databaseCpu.set(scenario.name, [...(each.databaseCpu.get(scenario.name) ?? []), (clusterCpuMicroseconds(cluster) - databaseBefore) / result.total]);
        }
      }
      const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${service.child.pid}/status`, 'utf8'))?.[1]) / 1024;
      each.peaks.push(peak);
      await stop(service);
      const sample = JSON.parse(readFileSync(probe, 'utf8')) as MemorySample & { gcPauses?: Record<string, number> };
      log(`${name} (${flags.join(' ') || 'no flags'}), run ${repeat + 1}: peak RSS ${peak.toFixed(0)} MiB; at its peak ${memoryLine(sample)}; collections ${JSON.stringify(sample.gcPauses)}`);
      if (cluster === undefined) rmSync(database, { force: true });
    }
  }
  for (const [name, each] of figures) {
    log(`${name}: peak RSS ${each.peaks.map((peak) => peak.toFixed(0)).join(', ')} MiB; ` +
      scenarios.map((scenario) => `${scenario.name} ${Math.round(median(each.rates.get(scenario.name)!))} req/s at ${median(each.cpu.get(scenario.name)!).toFixed(1)} µs` +
        (cluster === undefined ? '' : ` + ${median(each.databaseCpu.get(scenario.name)!).toFixed(1)} µs PostgreSQL`)).join('; '));
  }
} finally {
  client.stop();
  await cluster?.destroy();
  rmSync(directory, { recursive: true, force: true });
}
