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

/** One request of a scenario, as the load generator sends it. */
export type LoadRequest = NonNullable<LoadJob['requests']>[number];

export interface Scenario {
  readonly name: string;
  readonly label: string;
  /** The requests each connection cycles through: one for most scenarios, many for the mix. */
  readonly requests: (pets: number) => readonly LoadRequest[];
  /** The ratio to its ceiling this scenario should reach. */
  readonly goal: number;
  /**
   * What the goal is measured against: the Koa ceiling, or (for durable writes) the durable ceiling,
   * which also commits each created pet to a SQLite file before its 201.
   */
  readonly against: 'ceiling' | 'durable';
  /** The service's p99 latency at the benchmark's connections this scenario should stay under. */
  readonly p99GoalMs?: number;
  /** What the Koa ceiling is loaded with instead, when it is measured on another request (the inventory against its listing). */
  readonly ceilingRequests?: (pets: number) => readonly LoadRequest[];
}

const CREATE: LoadRequest = { method: 'POST', path: '/v1/pets', body: '{"name":"Bench","categoryId":1,"status":"available"}' };
/** The mix's different listings in the HTTP comparison and beside PostgreSQL. */
const MIX_LISTINGS = 200;

/**
 * The 90/10 mix: `listings` different listings (every filter, limits 1, 20 and 100, cursors spread over
 * the first nine tenths of the ids, so that no page reaches the end where creations land and changes
 * size) with a creation after every nine.
 */
export function mixRequests(pets: number, listings: number): LoadRequest[] {
  const statuses = ['', '&status=available', '&status=pending', '&status=sold'];
  const cursors = Math.max(1, Math.floor(pets * 0.9));
  const requests: LoadRequest[] = [];
  for (let index = 0; index < listings; index++) {
    requests.push({ method: 'GET', path: `/v1/pets?limit=${[1, 20, 100][index % 3]}${statuses[index % 4]}&after=${(index * 7919) % cursors}` });
    if (index % 9 === 8) requests.push(CREATE);
  }
  return requests;
}

export const SCENARIOS: readonly Scenario[] = [
  { name: 'list-20', label: 'GET /v1/pets?limit=20', requests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }], goal: 1.0, against: 'ceiling' },
  {
    name: 'list-100-available', label: 'GET /v1/pets?limit=100&status=available', requests: () => [{ method: 'GET', path: '/v1/pets?limit=100&status=available' }],
    goal: 1.0, against: 'ceiling',
  },
  { name: 'create', label: 'POST /v1/pets (durable)', requests: () => [CREATE], goal: 0.85, against: 'durable', p99GoalMs: 50 },
  { name: 'mix', label: 'varied listings, 10% creations', requests: (pets) => mixRequests(pets, MIX_LISTINGS), goal: 0.9, against: 'ceiling' },
  {
    name: 'inventory', label: 'GET /v1/store/inventory (against the ceiling\'s GET /v1/pets?limit=20)', requests: () => [{ method: 'GET', path: '/v1/store/inventory' }],
    goal: 1.0, against: 'ceiling', ceilingRequests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }],
  },
];

/** The load generator's job for `scenario` at `origin`: its one request, or the list it cycles through. */
export function scenarioJob(scenario: Scenario, pets: number, origin: string, ceiling = false): Pick<LoadJob, 'url' | 'method' | 'body' | 'requests'> {
  const requests = (ceiling && scenario.ceilingRequests ? scenario.ceilingRequests : scenario.requests)(pets);
  if (requests.length > 1) return { url: origin, method: 'GET', requests };
  const [only] = requests as [LoadRequest];
  return { url: origin + only.path, method: only.method, ...(only.body === undefined ? {} : { body: only.body }) };
}

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
  /**
   * For POST: the durable ceiling writing a creation's rows into the service's database (`--creation-rows`),
   * and its median over the durable ceiling's: the most the event-sourced rows let any service reach.
   */
  readonly creationRowsCeiling?: TargetFigures | undefined;
  readonly creationRowsRatio?: number | undefined;
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
export async function startService(database: string, directory: string, pin: boolean, profileDirectory?: string, environment: Record<string, string> = {}): Promise<Started> {
  const logFile = join(directory, 'service.log');
  const log = openSync(logFile, 'w');
  const profile = profileDirectory === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDirectory];
  const [command, args] = pinned(0, [...profile, ...npmStartNodeArgs()], pin);
  const child = spawn(command, args, {
    cwd: directory,
    // As deployed: the production profile (metrics off unless asked for), a key, the request log on.
    env: {
      PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'http://127.0.0.1/v1',
      PETSTORE_DATABASE: database, PETSTORE_API_KEYS: BENCH_API_KEY, PETSTORE_LOG_LEVEL: 'info', ...environment,
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

/** The Koa ceiling; with `durableFile`, the durable ceiling committing its creations there (with `creationRows`, a creation's rows of the service's database). */
async function startCeiling(bodiesFile: string, pin: boolean, durableFile?: string, creationRows = false): Promise<Started> {
  const durable = durableFile === undefined ? [] : ['--durable', durableFile, ...(creationRows ? ['--creation-rows'] : [])];
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
    const bodies = await sampleBodies(service.origin, options.pets);
    const bodiesFile = join(directory, 'ceiling-bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(ceilingBodies(bodies)));
    const ceiling = await startCeiling(bodiesFile, pin);
    started.push(ceiling);
    // On the same disk as the service's database.
    const durable = await startCeiling(bodiesFile, pin, join(directory, 'durable-ceiling.db'));
    started.push(durable);
    const creationRows = await startCeiling(bodiesFile, pin, await seededCopy(options.pets, join(directory, 'creation-rows-ceiling.db')), true);
    started.push(creationRows);

    const load = (target: Started, scenario: Scenario, seconds: number) => client.run({
      ...scenarioJob(scenario, options.pets, target.origin, target === ceiling),
      headers,
      connections: options.connections,
      seconds,
    });
    const targets = { service, ceiling, durable, creationRows } as const;
    const scenariosRun = SCENARIOS.filter((scenario) => options.only === undefined || options.only.includes(scenario.name));
    // Listings from precomputed bodies are the same on both ceilings: the durable one is loaded only with the durable writes it judges.
    const targetsOf = (scenario: Scenario) => (scenario.against === 'durable' ? (['ceiling', 'durable', 'creationRows', 'service'] as const) : (['ceiling', 'service'] as const));
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
      const rowsFigures = results.has(`${scenario.name}/creationRows`) ? figures(`${scenario.name}/creationRows`) : undefined;
      return {
        name: scenario.name, label: scenario.label, goal: scenario.goal, against: scenario.against, p99GoalMs: scenario.p99GoalMs, bodyBytes: meanBodyBytes(scenario, options.pets, bodies),
        service: serviceFigures, ceiling: ceilingFigures, ratio: serviceFigures.median / ceilingFigures.median,
        ...(durableFigures ? { durableCeiling: durableFigures, durableRatio: serviceFigures.median / durableFigures.median } : {}),
        ...(durableFigures && rowsFigures ? { creationRowsCeiling: rowsFigures, creationRowsRatio: rowsFigures.median / durableFigures.median } : {}),
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

const requestKey = (request: LoadRequest) => `${request.method} ${request.path}`;

/**
 * The service's answer to each different request of every scenario, by `requestKey`: the ceiling answers
 * with these bodies, so with the same sizes.
 */
async function sampleBodies(origin: string, pets: number): Promise<Map<string, Buffer>> {
  const bodies = new Map<string, Buffer>();
  for (const request of SCENARIOS.flatMap((scenario) => scenario.requests(pets))) {
    if (bodies.has(requestKey(request))) continue;
    const response = await fetch(origin + request.path, { method: request.method, headers, ...(request.body === undefined ? {} : { body: request.body }) });
    if (!response.ok) throw new Error(`${requestKey(request)} answered ${response.status}: ${await response.text()}`);
    bodies.set(requestKey(request), Buffer.from(await response.arrayBuffer()));
  }
  return bodies;
}

/** The ceiling server's bodies file (see bench/ceiling-server.ts): each listing by its query string, and the 201 of a creation. */
function ceilingBodies(bodies: ReadonlyMap<string, Buffer>): { gets: Record<string, string>; post: string } {
  const gets: Record<string, string> = {};
  let post: string | undefined;
  for (const [key, body] of bodies) {
    const [method, path] = key.split(' ') as [string, string];
    if (method === 'POST') post = body.toString('base64');
    else gets[path.split('?')[1] ?? ''] = body.toString('base64');
  }
  if (post === undefined) throw new Error('no scenario creates a pet, so the ceiling has no 201 to answer with');
  return { gets, post };
}

/** The size of a scenario's answers, averaged over the requests it cycles through. */
function meanBodyBytes(scenario: Scenario, pets: number, bodies: ReadonlyMap<string, Buffer>): number {
  const requests = scenario.requests(pets);
  return Math.round(requests.reduce((sum, request) => sum + bodies.get(requestKey(request))!.length, 0) / requests.length);
}

const DISTINCT_LISTINGS = 2000;

/** The service over `pets` pets under the 90/10 mix with many different pages, to see its memory while it serves. */
async function measureServing(pets: number, options: Pick<HttpOptions, 'memorySeconds' | 'connections' | 'log'>, directory: string, client: LoadClient, pin: boolean): Promise<ServingFigures> {
  const service = await startService(await seededCopy(pets, join(directory, `serving-${pets}.db`)), directory, pin);
  try {
    const requests = mixRequests(pets, DISTINCT_LISTINGS);
    const result = await client.run({ url: service.origin, method: 'GET', headers, connections: options.connections, seconds: options.memorySeconds, requests });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`serving ${pets} pets: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    const figures = { pets, seconds: options.memorySeconds, distinctListings: DISTINCT_LISTINGS, requestsPerSecond: result.requestsPerSecond, peakRssMb: peakRssMb(service.child.pid!) };
    options.log(`serving ${pets} pets (${DISTINCT_LISTINGS} distinct listings, a creation in ten): ${Math.round(result.requestsPerSecond)} req/s, peak RSS ${figures.peakRssMb.toFixed(0)} MB`);
    return figures;
  } finally {
    await stop(service);
  }
}
