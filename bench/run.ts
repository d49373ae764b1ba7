// The benchmark: `npm run bench` (about 15 minutes), `npm run bench:quick` (under a minute), or
// `npm run bench:smoke` (tiny sizes, for CI: checks that it runs, writes to a scratch folder), or
// (each: in process, over HTTP against the Koa ceiling, the event feed: bench/event-feed.ts, webhook
// delivery: bench/webhooks.ts, consumer groups, and placing an order against a durable creation: bench/store-orders.ts)
// `npm run bench:report` (measures nothing: renders docs/performance.md and the chart from bench/results/latest.json).
//   node --import tsx bench/run.ts <full|quick|smoke|report> [--out <folder>]
//   node --import tsx bench/run.ts <mode> --only list-20[,create] [--pets 10000] [--profile <folder>]
//   node --import tsx bench/run.ts <mode> --backends-only [--only list-20[,mix]] [--profile <folder>]
// --backends-only: just the service on PostgreSQL beside SQLite, printed and not written (--only: just
// those of its scenarios: list-20, list-100-available, mix, create);
// --only: just those HTTP scenarios (list-20, list-100-available, create, mix), service against ceiling,
// printed and not written (for working on one path); --profile: also a V8 CPU profile of the service,
// written into that folder.
// Writes <folder>/latest.json and <folder>/chart.svg (default bench/results), prints the tables, and
// (full and quick, into bench/results) renders them into docs/performance.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { runFeed } from './event-feed.ts';
import type { FeedOptions } from './event-feed.ts';
import { memoryLine, runHttp, SCENARIOS } from './http-load.ts';
import type { HttpOptions } from './http-load.ts';
import { runInProcess } from './in-process.ts';
import { runBackends } from './postgres-vs-sqlite.ts';
import type { BackendOptions } from './postgres-vs-sqlite.ts';
import type { InProcessOptions } from './in-process.ts';
import { runWebhookBench } from './webhooks.ts';
import { runGroupBench } from './consumer-groups.ts';
import type { GroupBenchOptions } from './consumer-groups.ts';
import { runPlacementBench } from './store-orders.ts';
import type { PlacementBenchOptions } from './store-orders.ts';
import type { WebhookBenchOptions } from './webhooks.ts';
import { chartSvg, judge, markdownTables, PERFORMANCE_PAGE, writePerformancePage } from './report.ts';
import type { BenchResults } from './report.ts';

const ALL_STATUSES = ['any', 'available', 'pending', 'sold'] as const;

type Settings = { http: Omit<HttpOptions, 'log'>; inProcess: Omit<InProcessOptions, 'log'>; backends: Omit<BackendOptions, 'log'>; feed: Omit<FeedOptions, 'log'>; webhooks: Omit<WebhookBenchOptions, 'log'>; groups: Omit<GroupBenchOptions, 'log'>; placement: Omit<PlacementBenchOptions, 'log'> };

const MODES: Record<string, Settings> = {
  full: {
    http: { pets: 10_000, rounds: 5, seconds: 6, warmupSeconds: 2, connections: 64, memoryPets: [1000, 1_000_000], memorySeconds: 10 },
    inProcess: { smallPets: 1000, largePets: 1_000_000, rebuildPets: 1_000_000, minCpuMs: 300, statuses: ALL_STATUSES, limits: [1, 20, 100], groupSizes: [1, 8, 64, 256], groupsEach: 40 },
    backends: { pets: 100_000, rounds: 5, seconds: 6, warmupSeconds: 2, connections: 64 },
    feed: { pets: 100_000, catchUpRounds: 5, liveWrites: 1000, idleStreams: 1000, postgres: true },
    webhooks: { events: 20_000, liveWrites: 1000 },
    groups: { pets: 20_000, rounds: 3, postgres: true },
    placement: { pets: 200_000, rounds: 5, seconds: 1.5, warmupSeconds: 0.5, connections: 64 },
  },
  quick: {
    http: { pets: 10_000, rounds: 3, seconds: 3, warmupSeconds: 1, connections: 64, memoryPets: [], memorySeconds: 0 },
    inProcess: { smallPets: 1000, largePets: 100_000, rebuildPets: 100_000, minCpuMs: 20, statuses: ALL_STATUSES, limits: [1, 20, 100], groupSizes: [1, 64], groupsEach: 10 },
    backends: { pets: 100_000, rounds: 2, seconds: 2, warmupSeconds: 1, connections: 64 },
    feed: { pets: 100_000, catchUpRounds: 2, liveWrites: 300, idleStreams: 1000, postgres: true },
    webhooks: { events: 5_000, liveWrites: 300 },
    groups: { pets: 5_000, rounds: 2, postgres: true },
    placement: { pets: 100_000, rounds: 3, seconds: 1, warmupSeconds: 0.5, connections: 64 },
  },
  smoke: {
    http: { pets: 1000, rounds: 1, seconds: 0.5, warmupSeconds: 0.2, connections: 8, memoryPets: [1000], memorySeconds: 0.5 },
    inProcess: { smallPets: 200, largePets: 1000, rebuildPets: 1000, minCpuMs: 1, statuses: ['any', 'sold'], limits: [20], groupSizes: [1, 8], groupsEach: 2 },
    backends: { pets: 1000, rounds: 1, seconds: 0.2, warmupSeconds: 0, connections: 8 },
    feed: { pets: 1000, catchUpRounds: 1, liveWrites: 20, idleStreams: 20, postgres: true },
    webhooks: { events: 200, liveWrites: 20 },
    groups: { pets: 200, rounds: 1, postgres: true },
    placement: { pets: 10_000, rounds: 1, seconds: 0.5, warmupSeconds: 0.2, connections: 8 },
  },
};

const root = resolve(import.meta.dirname, '..');

interface Arguments {
  readonly mode: string;
  readonly out: string;
  readonly updatePage: boolean;
  /** A scratch folder: the files are read back to check them, then removed. */
  readonly scratch: boolean;
}

function parseArguments(argv: readonly string[]): Arguments {
  const [mode = 'full', ...rest] = argv;
  if (!MODES[mode]) throw new Error(`unknown mode ${mode}: use full, quick, smoke or report`);
  const outIndex = rest.indexOf('--out');
  const out = outIndex >= 0 ? resolve(rest[outIndex + 1] ?? '') : undefined;
  if (out !== undefined) return { mode, out, updatePage: false, scratch: false };
  if (mode === 'smoke') return { mode, out: mkdtempSync(join(tmpdir(), 'petstore-bench-smoke-')), updatePage: false, scratch: true };
  return { mode, out: join(root, 'bench', 'results'), updatePage: true, scratch: false };
}

/** The smoke run's check that what it wrote can be read: the figures as JSON, the chart as SVG. */
function checkWritten(out: string): void {
  const results = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as BenchResults;
  const figures = [
    ...results.http.scenarios.flatMap((scenario) => [scenario.service.median, scenario.ceiling.median]),
    ...results.http.serving.map((figures) => figures.peakRssMb),
    ...results.http.scenarios.filter((scenario) => scenario.against === 'durable').map((scenario) => scenario.durableCeiling?.median ?? Number.NaN),
    results.inProcess.rebuild.eventsPerSecond,
    results.feed!.catchUp.eventsPerSecond,
    results.feed!.live.postgres!.writesPerSecond,
    ...(results.backends?.scenarios ?? []).flatMap((scenario) => [scenario.sqlite.median, scenario.postgres.median]),
    ...(results.webhooks ?? []).map((figures) => figures.backlogEventsPerSecond),
    results.placement?.ratio ?? Number.NaN,
    results.placement?.placement.cpuPerRequestUs ?? Number.NaN,
  ];
  const missing = SCENARIOS.filter((scenario) => !results.http.scenarios.some((figures) => figures.name === scenario.name));
  if (missing.length > 0) throw new Error(`latest.json holds no figures of ${missing.map((scenario) => scenario.name).join(', ')}`);
  if (results.http.serving.length === 0) throw new Error('latest.json holds no peak RSS of the service while it serves');
  if (results.webhooks?.length !== 2) throw new Error('latest.json holds no webhook figures');
  if (results.backends === undefined) throw new Error('latest.json holds no PostgreSQL figures');
  if (!figures.every((figure) => Number.isFinite(figure) && figure > 0)) throw new Error(`latest.json holds a figure that is not a positive number: ${figures.join(', ')}`);
  if (!readFileSync(join(out, 'chart.svg'), 'utf8').startsWith('<svg')) throw new Error('chart.svg is not an SVG');
}

function git(...args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function machineFacts(): Record<string, unknown> {
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.versions.node,
    platform: `${process.platform} ${release()}`,
    loadAverage: loadavg().map((value) => Number(value.toFixed(2))),
  };
}

function optionValue(argv: readonly string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  return index >= 0 ? argv[index + 1] : undefined;
}

/** `--only`: the named HTTP scenarios alone, printed as service, ceiling and ratio. */
async function runOnly(settings: Settings, only: readonly string[], profileDirectory: string | undefined, pets: number | undefined, log: (line: string) => void): Promise<void> {
  const http = await runHttp({ ...settings.http, ...(pets === undefined ? {} : { pets }), memoryPets: [], only, profileDirectory: profileDirectory && resolve(profileDirectory), log });
  for (const scenario of http.scenarios) {
    log(`${scenario.label}: service ${Math.round(scenario.service.median)} req/s, ceiling ${Math.round(scenario.ceiling.median)} req/s, ratio ${scenario.ratio.toFixed(2)}${scenario.against === 'ceiling' ? ` (goal ${scenario.goal})` : ''}; CPU a request ${scenario.service.cpuPerRequestUs.toFixed(1)} µs (${scenario.service.loopCpuPerRequestUs.toFixed(1)} on the event loop) against ${scenario.ceiling.cpuPerRequestUs.toFixed(1)} µs (${(scenario.ceiling.cpuPerRequestUs / scenario.service.cpuPerRequestUs).toFixed(2)})`);
    for (const [name, figures, ratio] of [
      ['bare node:http', scenario.bare, scenario.bareRatio],
      ['durable ceiling', scenario.durableCeiling, scenario.durableRatio],
      ['event-sourced durable ceiling', scenario.eventSourcedCeiling, scenario.eventSourcedRatio],
    ] as const) {
      if (figures === undefined || ratio === undefined) continue;
      log(`${scenario.label}: ${name} ${Math.round(figures.median)} req/s, ratio ${ratio.toFixed(2)}; CPU a request ${figures.cpuPerRequestUs.toFixed(1)} µs (${figures.loopCpuPerRequestUs.toFixed(1)} on the event loop)`);
    }
  }
  const rss = http.peakRssMib ?? {};
  log(`peak RSS over the rounds: service ${rss.service?.toFixed(0)} MiB, bare node:http ${rss.bare?.toFixed(0)} MiB, Koa ${rss.ceiling?.toFixed(0)} MiB`);
  if (http.serviceMemory) log(`the service at its peak: ${memoryLine(http.serviceMemory)}`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const only = optionValue(argv, '--only');
  if (argv.includes('--backends-only')) {
    const profileDirectory = optionValue(argv, '--profile');
    const backends = await runBackends({
      ...(MODES[argv[0] ?? 'quick'] ?? MODES.quick!).backends, only: only?.split(','), profileDirectory: profileDirectory && resolve(profileDirectory), log,
    });
    for (const scenario of backends.scenarios) {
      log(`${scenario.label}: SQLite ${Math.round(scenario.sqlite.median)} req/s, PostgreSQL ${Math.round(scenario.postgres.median)} req/s, ratio ${scenario.ratio.toFixed(2)} (goal ${scenario.goal}); ` +
        `CPU a request ${scenario.sqlite.cpuPerRequestUs.toFixed(0)} µs against ${scenario.postgres.cpuPerRequestUs.toFixed(0)} + ${scenario.postgres.databaseCpuPerRequestUs.toFixed(0)} µs`);
    }
    return;
  }
  const pets = optionValue(argv, '--pets');
  if (only !== undefined) return runOnly(MODES[argv[0] ?? 'quick'] ?? MODES.quick!, only.split(','), optionValue(argv, '--profile'), pets === undefined ? undefined : Number(pets), log);
  if (argv[0] === 'report') {
    const results = JSON.parse(readFileSync(join(root, 'bench', 'results', 'latest.json'), 'utf8')) as BenchResults;
    writePerformancePage(root, results);
    writeFileSync(join(root, 'bench', 'results', 'chart.svg'), chartSvg(results));
    log(`rendered ${PERFORMANCE_PAGE} and bench/results/chart.svg from bench/results/latest.json`);
    return;
  }
  const { mode, out, updatePage, scratch } = parseArguments(argv);
  const settings = MODES[mode]!;
  const startedAt = new Date().toISOString();
  const machineAtStart = machineFacts();
  log(`petstore benchmark (${mode}), results into ${out}`);

  const inProcess = await runInProcess({ ...settings.inProcess, log });
  const http = await runHttp({ ...settings.http, log });
  const backends = await runBackends({ ...settings.backends, log });
  const feed = await runFeed({ ...settings.feed, log });
  const webhooks = await runWebhookBench({ ...settings.webhooks, log });
  const groups = await runGroupBench({ ...settings.groups, log });
  const placement = await runPlacementBench({ ...settings.placement, log });

  const head = git('rev-parse', '--short', 'HEAD') ?? 'unknown';
  const dirty = (git('status', '--porcelain', '--untracked-files=no') ?? '') !== '';
  const results: BenchResults = {
    mode,
    startedAt,
    finishedAt: new Date().toISOString(),
    commit: dirty ? `${head}+changes` : head,
    machine: { ...machineAtStart, loadAverageAtEnd: machineFacts().loadAverage },
    http,
    inProcess,
    backends,
    feed,
    webhooks,
    groups,
    placement,
    goals: judge(http, inProcess, feed, backends, webhooks, placement),
  };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(out, 'chart.svg'), chartSvg(results));
  const tables = markdownTables(results);
  if (updatePage) writePerformancePage(root, results);
  log(`\n${tables}\n`);
  if (scratch) {
    checkWritten(out);
    rmSync(out, { recursive: true, force: true });
    log('smoke run: the benchmark ran, and wrote readable results (now removed)');
  } else {
    log(`wrote ${join(out, 'latest.json')} and ${join(out, 'chart.svg')}${updatePage ? `, and the tables into ${PERFORMANCE_PAGE}` : ''}`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`benchmark failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
