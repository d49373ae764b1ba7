import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import type { LoadJob, LoadResult } from './load-client.ts';
import { seededCopy } from './seed.ts';
import { npmStartNodeArgs } from '../scripts/start-command.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// Resolved here, so that children find tsx whatever their working directory.
const TS = ['--import', import.meta.resolve('tsx')];
export const BENCH_API_KEY = 'bench-key-0123456789abcdef';

export interface Scenario {
  readonly name: string;
  readonly label: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: string;
  /** The ratio to its ceiling this scenario should reach. */
  readonly goal: number;
  /**
   * What the goal is measured against: the Koa ceiling, or (for durable writes) the durable ceiling,
   * which also commits each created pet to a SQLite file before its 201.
   */
  readonly against: 'ceiling' | 'durable';
  /** The service's p99 latency at the benchmark's connections this scenario should stay under. */
  readonly p99GoalMs?: number;
}

export const SCENARIOS: readonly Scenario[] = [
  { name: 'list-20', label: 'GET /v1/pets?limit=20', method: 'GET', path: '/v1/pets?limit=20', goal: 0.8, against: 'ceiling' },
  { name: 'list-100-available', label: 'GET /v1/pets?limit=100&status=available', method: 'GET', path: '/v1/pets?limit=100&status=available', goal: 0.5, against: 'ceiling' },
  {
    name: 'create', label: 'POST /v1/pets (durable)', method: 'POST', path: '/v1/pets', body: '{"name":"Bench","categoryId":1,"status":"available"}',
    goal: 0.7, against: 'durable', p99GoalMs: 50,
  },
];

export interface HttpOptions {
  readonly pets: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  /**
   * Also serve each of these catalogue sizes with varied listings and some creations, and report the
   * peak RSS of each: the smallest shows what the process costs without data.
   */
  readonly memoryPets: readonly number[];
  readonly memorySeconds: number;
  /** Only these scenarios (by name); all when undefined. */
  readonly only?: readonly string[] | undefined;
  /** Write a V8 CPU profile of the service into this folder. */
  readonly profileDirectory?: string | undefined;
  readonly log: (line: string) => void;
}

export interface TargetFigures {
  /** req/s of each round, in the order run. */
  readonly rounds: readonly number[];
  readonly median: number;
  readonly latencyP99Ms: number;
  /**
   * The server's CPU time (user + system) over the requests it answered, median over the rounds: less
   * swayed than req/s by other work on a shared machine.
   */
  readonly cpuPerRequestUs: number;
  /** The part of it on the event loop's thread; the rest is the process's other threads (a writer, the GC's helpers). */
  readonly loopCpuPerRequestUs: number;
}

export interface ScenarioFigures {
  readonly name: string;
  readonly label: string;
  readonly goal: number;
  /** Which ratio the goal judges (absent from results of before the durable ceiling: the Koa ceiling's). */
  readonly against?: Scenario['against'];
  readonly p99GoalMs?: number | undefined;
  readonly bodyBytes: number;
  readonly service: TargetFigures;
  readonly ceiling: TargetFigures;
  /** Median service req/s over median ceiling req/s. */
  readonly ratio: number;
  /** For POST: the durable ceiling's figures, and the service's median over its median. */
  readonly durableCeiling?: TargetFigures | undefined;
  readonly durableRatio?: number | undefined;
}

export interface HttpFigures {
  readonly pets: number;
  readonly connections: number;
  readonly rounds: number;
  readonly seconds: number;
  /** Whether the servers (core 0) and the load generator (core 1) were pinned with taskset. */
  readonly pinned: boolean;
  readonly scenarios: readonly ScenarioFigures[];
  /** The service's peak resident memory over the load rounds, in MB. */
  readonly servicePeakRssMb: number;
  readonly serving: readonly ServingFigures[];
}

export interface ServingFigures {
  readonly pets: number;
  readonly seconds: number;
  readonly distinctListings: number;
  readonly requestsPerSecond: number;
  readonly peakRssMb: number;
}

/** Pinning needs taskset and two cores; without them the processes run where the OS puts them. */
export function canPin(): boolean {
  return availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

function pinned(core: number, args: readonly string[], pin: boolean): [string, string[]] {
  return pin ? ['taskset', ['-c', String(core), process.execPath, ...args]] : [process.execPath, [...args]];
}

export interface Started {
  readonly child: ChildProcess;
  readonly origin: string;
}

/** The service as `npm start` runs it, pinned to core 0, its log going to a file; `database` is a SQLite path or a PostgreSQL URL. */
export async function startService(database: string, directory: string, pin: boolean, profileDirectory?: string): Promise<Started> {
  const logFile = join(directory, 'service.log');
  const log = openSync(logFile, 'w');
  const profile = profileDirectory === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDirectory];
  const [command, args] = pinned(0, [...profile, ...npmStartNodeArgs()], pin);
  const child = spawn(command, args, {
    cwd: directory,
    // As deployed: the production profile (metrics off unless asked for), a key, the request log on.
    env: {
      PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'http://127.0.0.1/v1',
      PETSTORE_DATABASE: database, PETSTORE_API_KEYS: BENCH_API_KEY, PETSTORE_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const url = /listening on (http:\/\/\S+)\/v1/.exec(readFileSync(logFile, 'utf8'))?.[1];
    if (url) return { child, origin: url };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start: ${readFileSync(logFile, 'utf8')}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** The Koa ceiling; with `durableFile`, the durable ceiling committing its creations there. */
async function startCeiling(bodiesFile: string, pin: boolean, durableFile?: string): Promise<Started> {
  const durable = durableFile === undefined ? [] : ['--durable', durableFile];
  const [command, args] = pinned(0, [...TS, join(root, 'bench', 'ceiling-server.ts'), bodiesFile, ...durable], pin);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  for await (const chunk of child.stdout!) {
    output += String(chunk);
    const port = /listening (\d+)/.exec(output)?.[1];
    if (port) return { child, origin: `http://127.0.0.1:${port}` };
  }
  throw new Error('the ceiling server did not start');
}

export interface LoadClient {
  run(job: LoadJob): Promise<LoadResult>;
  stop(): void;
}

export function startLoadClient(pin: boolean): LoadClient {
  const [command, args] = pinned(1, [...TS, join(root, 'bench', 'load-client.ts')], pin);
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return {
    async run(job) {
      child.send(job);
      const [answer] = (await once(child, 'message')) as [LoadResult | { error: string }];
      if ('error' in answer) throw new Error(`load generator failed: ${answer.error}`);
      return answer;
    },
    stop: () => child.disconnect(),
  };
}

export async function stop(started: Started): Promise<void> {
  if (started.child.exitCode !== null) return;
  started.child.kill('SIGTERM');
  await once(started.child, 'exit');
}

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * utime + stime of a process from /proc, in microseconds (Linux reports clock ticks of 1/100 s); with
 * `thread`, of that thread alone (the process's first thread, whose id is the pid, runs the event loop).
 */
export function cpuMicroseconds(pid: number, thread?: number): number {
  const fields = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

export const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export const headers = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };

/**
 * The service and the Koa ceiling, both on core 0, loaded in turn from core 1 by autocannon with
 * `connections` connections: a warm-up for each, then `rounds` rounds that alternate which goes first.
 * The figures are medians over the rounds.
 */
export async function runHttp(options: HttpOptions): Promise<HttpFigures> {
  const pin = canPin();
  if (!pin) options.log('note: taskset or a second core is missing; the processes are not pinned');
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-http-'));
  const started: Started[] = [];
  const client = startLoadClient(pin);
  try {
    const service = await startService(await seededCopy(options.pets, join(directory, 'petstore.db')), directory, pin, options.profileDirectory);
    started.push(service);
    const bodies = await sampleBodies(service.origin);
    const bodiesFile = join(directory, 'ceiling-bodies.json');
    writeFileSync(bodiesFile, JSON.stringify({
      gets: Object.fromEntries(SCENARIOS.filter((scenario) => scenario.method === 'GET').map((scenario) => [scenario.path.split('?')[1] ?? '', bodies.get(scenario.name)!.toString('base64')])),
      post: bodies.get('create')!.toString('base64'),
    }));
    const ceiling = await startCeiling(bodiesFile, pin);
    started.push(ceiling);
    // On the same disk as the service's database.
    const durable = await startCeiling(bodiesFile, pin, join(directory, 'durable-ceiling.db'));
    started.push(durable);

    const load = (target: Started, scenario: Scenario, seconds: number) => client.run({
      url: target.origin + scenario.path,
      method: scenario.method,
      headers,
      ...(scenario.body === undefined ? {} : { body: scenario.body }),
      connections: options.connections,
      seconds,
    });
    const targets = { service, ceiling, durable } as const;
    const scenariosRun = SCENARIOS.filter((scenario) => options.only === undefined || options.only.includes(scenario.name));
    // Listings from precomputed bodies are the same on both ceilings: the durable one is loaded with POSTs only.
    const targetsOf = (scenario: Scenario) => (scenario.method === 'POST' ? (['ceiling', 'durable', 'service'] as const) : (['ceiling', 'service'] as const));
    for (const scenario of scenariosRun) {
      for (const name of targetsOf(scenario)) await load(targets[name], scenario, options.warmupSeconds);
    }
    const results = new Map<string, (LoadResult & { cpuPerRequestUs: number; loopCpuPerRequestUs: number })[]>();
    for (let round = 0; round < options.rounds; round++) {
      for (const scenario of scenariosRun) {
        const order = round % 2 === 0 ? targetsOf(scenario) : [...targetsOf(scenario)].reverse();
        for (const name of order) {
          const pid = targets[name].child.pid!;
          const cpuBefore = cpuMicroseconds(pid);
          const loopCpuBefore = cpuMicroseconds(pid, pid);
          const result = await load(targets[name], scenario, options.seconds);
          const cpuPerRequestUs = (cpuMicroseconds(pid) - cpuBefore) / result.total;
          const loopCpuPerRequestUs = (cpuMicroseconds(pid, pid) - loopCpuBefore) / result.total;
          if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name} ${scenario.label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
          const key = `${scenario.name}/${name}`;
          results.set(key, [...(results.get(key) ?? []), { ...result, cpuPerRequestUs, loopCpuPerRequestUs }]);
          options.log(`round ${round + 1}/${options.rounds} ${scenario.label} ${name}: ${Math.round(result.requestsPerSecond)} req/s, ${cpuPerRequestUs.toFixed(1)} µs CPU a request (${loopCpuPerRequestUs.toFixed(1)} µs on the event loop)`);
        }
      }
    }
    const servicePeakRssMb = peakRssMb(service.child.pid!);
    const figures = (key: string): TargetFigures => {
      const runs = results.get(key)!;
      return {
        rounds: runs.map((run) => run.requestsPerSecond),
        median: median(runs.map((run) => run.requestsPerSecond)),
        latencyP99Ms: median(runs.map((run) => run.latencyP99Ms)),
        cpuPerRequestUs: median(runs.map((run) => run.cpuPerRequestUs)),
        loopCpuPerRequestUs: median(runs.map((run) => run.loopCpuPerRequestUs)),
      };
    };
    const scenarios = scenariosRun.map((scenario): ScenarioFigures => {
      const serviceFigures = figures(`${scenario.name}/service`);
      const ceilingFigures = figures(`${scenario.name}/ceiling`);
      const durableFigures = results.has(`${scenario.name}/durable`) ? figures(`${scenario.name}/durable`) : undefined;
      return {
        name: scenario.name, label: scenario.label, goal: scenario.goal, against: scenario.against, p99GoalMs: scenario.p99GoalMs, bodyBytes: bodies.get(scenario.name)!.length,
        service: serviceFigures, ceiling: ceilingFigures, ratio: serviceFigures.median / ceilingFigures.median,
        ...(durableFigures ? { durableCeiling: durableFigures, durableRatio: serviceFigures.median / durableFigures.median } : {}),
      };
    });
    for (const each of started.splice(0)) await stop(each);
    const serving: ServingFigures[] = [];
    for (const pets of options.memoryPets) serving.push(await measureServing(pets, options, directory, client, pin));
    return { pets: options.pets, connections: options.connections, rounds: options.rounds, seconds: options.seconds, pinned: pin, scenarios, servicePeakRssMb, serving };
  } finally {
    client.stop();
    for (const each of started) await stop(each);
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Only the memory figures: the service serving each of `memoryPets` pets in turn. */
export async function runServing(options: Pick<HttpOptions, 'memoryPets' | 'memorySeconds' | 'connections' | 'log'>): Promise<ServingFigures[]> {
  const pin = canPin();
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-memory-'));
  const client = startLoadClient(pin);
  try {
    const serving: ServingFigures[] = [];
    for (const pets of options.memoryPets) serving.push(await measureServing(pets, options, directory, client, pin));
    return serving;
  } finally {
    client.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** One answer of each scenario from the service: the ceiling answers with bodies of the same size. */
async function sampleBodies(origin: string): Promise<Map<string, Buffer>> {
  const bodies = new Map<string, Buffer>();
  for (const scenario of SCENARIOS) {
    const response = await fetch(origin + scenario.path, { method: scenario.method, headers, ...(scenario.body === undefined ? {} : { body: scenario.body }) });
    if (!response.ok) throw new Error(`${scenario.label} answered ${response.status}: ${await response.text()}`);
    bodies.set(scenario.name, Buffer.from(await response.arrayBuffer()));
  }
  return bodies;
}

const DISTINCT_LISTINGS = 2000;

/**
 * The service over `memoryPets` pets, asked for many different pages (every filter, every limit, cursors
 * all over the id range) with a creation every tenth request, to see its memory while it serves.
 */
async function measureServing(pets: number, options: Pick<HttpOptions, 'memorySeconds' | 'connections' | 'log'>, directory: string, client: LoadClient, pin: boolean): Promise<ServingFigures> {
  const service = await startService(await seededCopy(pets, join(directory, `serving-${pets}.db`)), directory, pin);
  try {
    const statuses = ['', '&status=available', '&status=pending', '&status=sold'];
    const requests: { method: 'GET' | 'POST'; path: string; body?: string }[] = [];
    for (let index = 0; index < DISTINCT_LISTINGS; index++) {
      const after = Math.floor((index * 7919) % pets);
      requests.push({ method: 'GET', path: `/v1/pets?limit=${[1, 20, 100][index % 3]}${statuses[index % 4]}&after=${after}` });
      if (index % 10 === 9) requests.push({ method: 'POST', path: '/v1/pets', body: SCENARIOS[2]!.body! });
    }
    const result = await client.run({ url: service.origin, method: 'GET', headers, connections: options.connections, seconds: options.memorySeconds, requests });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`serving ${pets} pets: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    const figures = { pets, seconds: options.memorySeconds, distinctListings: DISTINCT_LISTINGS, requestsPerSecond: result.requestsPerSecond, peakRssMb: peakRssMb(service.child.pid!) };
    options.log(`serving ${pets} pets (${DISTINCT_LISTINGS} distinct listings, a creation in ten): ${Math.round(result.requestsPerSecond)} req/s, peak RSS ${figures.peakRssMb.toFixed(0)} MB`);
    return figures;
  } finally {
    await stop(service);
  }
}
