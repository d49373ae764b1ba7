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
  /** The ratio to its baseline this scenario should reach. */
  readonly goal: number;
  /**
   * What the goal is measured against: bare node:http, the Koa ceiling, or (for durable writes) the
   * event-sourced durable ceiling, which also commits a creation's event and pet rows before its 201.
   */
  readonly against: Against;
  /** The service's p99 latency at the benchmark's connections this scenario should stay under. */
  readonly p99GoalMs?: number;
  /** What the baselines (node:http, the Koa ceiling) are loaded with instead, when the service is measured on another request (the inventory against their listing). */
  readonly ceilingRequests?: (pets: number) => readonly LoadRequest[];
}

/** The baselines a scenario's goal can judge it against (`durable`: results of before the event-sourced ceiling). */
export type Against = 'node' | 'ceiling' | 'durable' | 'event-sourced';

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
  { name: 'list-20', label: 'GET /v1/pets?limit=20', requests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }], goal: 0.7, against: 'node' },
  {
    name: 'list-100-available', label: 'GET /v1/pets?limit=100&status=available', requests: () => [{ method: 'GET', path: '/v1/pets?limit=100&status=available' }],
    goal: 0.7, against: 'node',
  },
  { name: 'create', label: 'POST /v1/pets (durable)', requests: () => [CREATE], goal: 0.95, against: 'event-sourced', p99GoalMs: 50 },
  { name: 'mix', label: 'varied listings, 10% creations', requests: (pets) => mixRequests(pets, MIX_LISTINGS), goal: 1.0, against: 'ceiling' },
  {
    name: 'inventory', label: 'GET /v1/store/inventory (against the ceiling\'s GET /v1/pets?limit=20)', requests: () => [{ method: 'GET', path: '/v1/store/inventory' }],
    goal: 1.0, against: 'ceiling', ceilingRequests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }],
  },
];

/** The load generator's job for `scenario` at `origin`: its one request, or the list it cycles through. */
export function scenarioJob(scenario: Scenario, pets: number, origin: string, baseline = false): Pick<LoadJob, 'url' | 'method' | 'body' | 'requests'> {
  const requests = (baseline && scenario.ceilingRequests ? scenario.ceilingRequests : scenario.requests)(pets);
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
  /** Bare node:http answering the same precomputed bodies, and the service's median over its median. */
  readonly bare?: TargetFigures | undefined;
  readonly bareRatio?: number | undefined;
  /** For POST: the durable ceiling's figures (one row a pet), and the service's median over its median. */
  readonly durableCeiling?: TargetFigures | undefined;
  readonly durableRatio?: number | undefined;
  /**
   * For POST: the event-sourced durable ceiling (`--event-sourced`: a creation's event and pet rows with
   * their indexes, in a copy of the service's database), and the service's median over its median.
   */
  readonly eventSourcedCeiling?: TargetFigures | undefined;
  readonly eventSourcedRatio?: number | undefined;
}

/** Where the service's memory lay at its highest resident memory (bench/memory-probe.mjs), in MiB. */
export interface MemorySample {
  readonly rssMib: number;
  readonly heapTotalMib: number;
  readonly heapUsedMib: number;
  readonly externalMib: number;
  readonly arrayBuffersMib: number;
  /** Compiled code and bytecode, as the process exited. */
  readonly codeAndMetadataMib: number;
  readonly heapSpacesMib: Record<string, { committed: number; used: number }>;
}

export interface HttpFigures {
  readonly pets: number;
  readonly connections: number;
  readonly rounds: number;
  readonly seconds: number;
  /** Whether the servers (core 0) and the load generator (core 1) were pinned with taskset. */
  readonly pinned: boolean;
  readonly scenarios: readonly ScenarioFigures[];
  /** The service's peak resident memory over the load rounds, in MiB. */
  readonly servicePeakRssMb: number;
  /** The peak resident memory of each server over the same rounds, in MiB (absent from older results). */
  readonly peakRssMib?: Partial<Record<TargetName, number>>;
  /** Where the service's memory lay at its peak over the rounds (absent from older results). */
  readonly serviceMemory?: MemorySample | undefined;
  readonly serving: readonly ServingFigures[];
}

export interface ServingFigures {
  readonly pets: number;
  readonly seconds: number;
  readonly distinctListings: number;
  readonly requestsPerSecond: number;
  readonly peakRssMb: number;
  readonly memory?: MemorySample | undefined;
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

/**
 * The service as `npm start` runs it, pinned to core 0, its log going to a file; `database` is a SQLite path
 * or a PostgreSQL URL. `nodeFlags` go after npm start's own (so they win), for comparing flags.
 */
export async function startService(database: string, directory: string, pin: boolean, profileDirectory?: string, environment: Record<string, string> = {}, memoryProbeFile?: string, nodeFlags: readonly string[] = []): Promise<Started> {
  const logFile = join(directory, 'service.log');
  const log = openSync(logFile, 'w');
  const profile = profileDirectory === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDirectory];
  const probe = memoryProbeFile === undefined ? [] : ['--import', join(root, 'bench', 'memory-probe.mjs')];
  const startArgs = npmStartNodeArgs();
  const [command, args] = pinned(0, [...profile, ...probe, ...startArgs.slice(0, -1), ...nodeFlags, ...startArgs.slice(-1)], pin);
  const child = spawn(command, args, {
    cwd: directory,
    // As deployed: the production profile (metrics off unless asked for), a key, the request log on.
    env: {
      PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'http://127.0.0.1/v1',
      PETSTORE_DATABASE: database, PETSTORE_API_KEYS: BENCH_API_KEY, PETSTORE_LOG_LEVEL: 'info', ...environment,
      ...(memoryProbeFile === undefined ? {} : { PETSTORE_BENCH_MEMORY_PROBE: memoryProbeFile }),
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

/** The Koa ceiling; with `durableFile`, the durable ceiling committing its creations there (with `eventSourced`, a creation's rows of the service's database). */
async function startCeiling(bodiesFile: string, pin: boolean, durableFile?: string, eventSourced = false): Promise<Started> {
  const durable = durableFile === undefined ? [] : ['--durable', durableFile, ...(eventSourced ? ['--event-sourced'] : [])];
  return startBaseline(pin, [...TS, join(root, 'bench', 'ceiling-server.ts'), bodiesFile, ...durable]);
}

/** A baseline server of bench/ (node's arguments: a script and its own), pinned to core 0; resolves once it prints its port. */
async function startBaseline(pin: boolean, script: readonly string[]): Promise<Started> {
  const [command, args] = pinned(0, [...script], pin);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  for await (const chunk of child.stdout!) {
    output += String(chunk);
    const port = /listening (\d+)/.exec(output)?.[1];
    if (port) return { child, origin: `http://127.0.0.1:${port}` };
  }
  throw new Error(`${script.join(' ')} did not start`);
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

/** VmHWM: the highest resident memory of the process so far, in MiB. */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/**
 * Times `/livez` every `everyMs` until stopped: how long another client waits for the service while a
 * phase runs. `stop` resolves with the times, in milliseconds.
 */
export function probeLivez(origin: string, everyMs: number): { stop(): Promise<number[]> } {
  const times: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const started = performance.now();
      await (await fetch(`${origin}/livez`)).arrayBuffer();
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      probing = false;
      await probe;
      return times;
    },
  };
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
    const probeFile = join(directory, 'memory-probe.json');
    const service = await startService(await seededCopy(options.pets, join(directory, 'petstore.db')), directory, pin, options.profileDirectory, {}, probeFile);
    started.push(service);
    const bodies = await sampleBodies(service.origin, options.pets);
    const bodiesFile = join(directory, 'ceiling-bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(ceilingBodies(bodies)));
    const ceiling = await startCeiling(bodiesFile, pin);
    started.push(ceiling);
    const bare = await startBaseline(pin, [join(root, 'bench', 'bare-server.mjs'), bodiesFile]);
    started.push(bare);
    // On the same disk as the service's database.
    const durable = await startCeiling(bodiesFile, pin, join(directory, 'durable-ceiling.db'));
    started.push(durable);
    const eventSourced = await startCeiling(bodiesFile, pin, await seededCopy(options.pets, join(directory, 'event-sourced-ceiling.db')), true);
    started.push(eventSourced);

    const load = (target: Started, scenario: Scenario, seconds: number) => client.run({
      ...scenarioJob(scenario, options.pets, target.origin, target === ceiling || target === bare),
      headers,
      connections: options.connections,
      seconds,
    });
    const targets: Record<TargetName, Started> = { service, ceiling, bare, durable, eventSourced };
    const scenariosRun = SCENARIOS.filter((scenario) => options.only === undefined || options.only.includes(scenario.name));
    // Listings from precomputed bodies are the same on every ceiling: the durable ones are loaded only with the durable writes they judge.
    const targetsOf = (scenario: Scenario): readonly TargetName[] => (scenario.requests(options.pets).every((request) => request.method === 'POST')
      ? ['bare', 'ceiling', 'durable', 'eventSourced', 'service']
      : ['bare', 'ceiling', 'service']);
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
    const peakRssMib = Object.fromEntries((['service', 'bare', 'ceiling'] as const).map((name) => [name, peakRssMb(targets[name].child.pid!)]));
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
      const bareFigures = figures(`${scenario.name}/bare`);
      const durableFigures = results.has(`${scenario.name}/durable`) ? figures(`${scenario.name}/durable`) : undefined;
      const eventSourcedFigures = results.has(`${scenario.name}/eventSourced`) ? figures(`${scenario.name}/eventSourced`) : undefined;
      return {
        name: scenario.name, label: scenario.label, goal: scenario.goal, against: scenario.against, p99GoalMs: scenario.p99GoalMs, bodyBytes: meanBodyBytes(scenario, options.pets, bodies),
        service: serviceFigures, ceiling: ceilingFigures, ratio: serviceFigures.median / ceilingFigures.median,
        bare: bareFigures, bareRatio: serviceFigures.median / bareFigures.median,
        ...(durableFigures ? { durableCeiling: durableFigures, durableRatio: serviceFigures.median / durableFigures.median } : {}),
        ...(eventSourcedFigures ? { eventSourcedCeiling: eventSourcedFigures, eventSourcedRatio: serviceFigures.median / eventSourcedFigures.median } : {}),
      };
    });
    for (const each of started.splice(0)) await stop(each);
    const serviceMemory = readMemoryProbe(probeFile);
    const serving: ServingFigures[] = [];
    for (const pets of options.memoryPets) serving.push(await measureServing(pets, options, directory, client, pin));
    return { pets: options.pets, connections: options.connections, rounds: options.rounds, seconds: options.seconds, pinned: pin, scenarios, servicePeakRssMb, peakRssMib, serviceMemory, serving };
  } finally {
    client.stop();
    for (const each of started) await stop(each);
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The servers a scenario is run on: the service and its baselines. */
export type TargetName = 'service' | 'ceiling' | 'bare' | 'durable' | 'eventSourced';

/** What bench/memory-probe.mjs wrote as the service exited; undefined when it wrote nothing (a service killed). */
function readMemoryProbe(file: string): MemorySample | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as MemorySample;
  } catch {
    return undefined;
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
  const probeFile = join(directory, `memory-probe-${pets}.json`);
  const service = await startService(await seededCopy(pets, join(directory, `serving-${pets}.db`)), directory, pin, undefined, {}, probeFile);
  let figures: Omit<ServingFigures, 'memory'>;
  try {
    const requests = mixRequests(pets, DISTINCT_LISTINGS);
    const result = await client.run({ url: service.origin, method: 'GET', headers, connections: options.connections, seconds: options.memorySeconds, requests });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`serving ${pets} pets: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    figures = { pets, seconds: options.memorySeconds, distinctListings: DISTINCT_LISTINGS, requestsPerSecond: result.requestsPerSecond, peakRssMb: peakRssMb(service.child.pid!) };
  } finally {
    await stop(service);
  }
  const memory = readMemoryProbe(probeFile);
  options.log(`serving ${pets} pets (${DISTINCT_LISTINGS} distinct listings, a creation in ten): ${Math.round(figures.requestsPerSecond)} req/s, peak RSS ${figures.peakRssMb.toFixed(0)} MiB` +
    (memory ? `; at its peak ${memoryLine(memory)}` : ''));
  return { ...figures, memory };
}

/** A memory sample in one line: where the resident memory lay. */
export function memoryLine(memory: MemorySample): string {
  const spaces = Object.entries(memory.heapSpacesMib).filter(([, space]) => space.committed >= 1).map(([name, space]) => `${name.replace(/_space$/, '')} ${space.committed}`).join(', ');
  return `RSS ${memory.rssMib} MiB: V8 heap ${memory.heapTotalMib} committed (${memory.heapUsedMib} used; ${spaces}), of it code and bytecode ${memory.codeAndMetadataMib}; ` +
    `external ${memory.externalMib} (of it Buffers ${memory.arrayBuffersMib}); the rest (${(memory.rssMib - memory.heapTotalMib - memory.externalMib).toFixed(1)}) is the binary, native stacks and malloc's`;
}
