// The event feed's figures, the service as `npm start` runs it in a process of its own over a seeded
// SQLite file (seeds are cached in bench/.data):
// - catch-up: the whole log streamed to one consumer (Server-Sent Events), in events a second;
// - live: creations at most 1,000 a second, each timed from its 201 to its event arriving on an open
//   stream (p50, p99): on SQLite through one service, and on PostgreSQL written through one instance
//   and streamed from another (a throwaway cluster);
// - idle: the service's resident memory with 1,000 streams open and idle, against none.
// Goals (bench/goals.ts): catch-up ≥ 200,000 events/s on the large seed; live p99 ≤ 10 ms on SQLite and
// ≤ 100 ms between two instances on PostgreSQL; idle streams under 50 MB over the idle service.
// `npm run bench` runs it (see run.ts); on its own:
//   npm run bench:feed [-- <pets>] [--against <checkout>] [--rounds N]
// --against: the catch-up alone, alternating rounds between that checkout's service and this one's on
// copies of one seed, medians and their ratio (for a change to the feed's read path).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findPostgresBin, startPostgresCluster } from '../scripts/postgres-cluster.ts';
import { npmStartNodeArgs } from '../scripts/start-command.ts';
import { cpuMicroseconds } from './http-load.ts';
import { CATCH_UP_EVENTS_PER_SECOND, IDLE_STREAMS_MIB, LIVE_P99_MS } from './goals.ts';
import { seedStatus, seededCopy } from './seed.ts';

/** The key the benchmark's service accepts. */
export const FEED_BENCH_KEY = 'bench-feed-key-0123456789';
const KEY = FEED_BENCH_KEY;
const headers = { authorization: `Bearer ${KEY}` };
const streamHeaders = { ...headers, accept: 'text/event-stream' };


export interface FeedOptions {
  /** Pets in the seed the catch-up reads. */
  readonly pets: number;
  readonly catchUpRounds: number;
  /** Creations timed on each store, at most 1,000 a second. */
  readonly liveWrites: number;
  readonly idleStreams: number;
  /** Also the two-instance latency on a throwaway PostgreSQL cluster (needs the machine's PostgreSQL). */
  readonly postgres: boolean;
  readonly log: (line: string) => void;
}

export interface LiveFigures {
  readonly writes: number;
  readonly writesPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface FeedFigures {
  readonly catchUp: {
    readonly events: number;
    readonly rounds: number[];
    readonly eventsPerSecond: number;
    /** The service's CPU time (user + system) an event, median of the rounds: steadier than events/s on a busy machine. */
    readonly cpuPerEventUs: number;
  };
  readonly live: { readonly sqlite: LiveFigures; readonly postgres?: LiveFigures };
  readonly idle: { readonly streams: number; readonly serviceMib: number; readonly addedMib: number };
}

/** A process's resident memory in MiB (Linux). */
function residentMib(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kib / 1024;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The seed's log: one event a pet, and a status change for the ones that were sold. */
export function seededEvents(count: number): number {
  let events = 0;
  for (let id = 1; id <= count; id++) events += seedStatus(id).added === seedStatus(id).now ? 1 : 2;
  return events;
}

/** Reads an SSE body, telling `onId` each `id:` as its message completes, until it returns true. */
async function readIds(body: ReadableStream<Uint8Array>, onId: (id: number, data: string) => boolean): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let start = 0;
    let end: number;
    while ((end = buffered.indexOf('\n\n', start)) >= 0) {
      const block = buffered.slice(start, end);
      start = end + 2;
      if (!block.startsWith('id: ')) continue;
      const newline = block.indexOf('\n');
      if (onId(Number(block.slice(4, newline)), block.slice(newline + 7))) return;
    }
    buffered = buffered.slice(start);
  }
}

export interface FeedService {
  readonly base: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** The service of `checkout` (this one by default) as `npm start` runs it, in `directory`, on `database`. */
export async function startFeedService(database: string, directory: string, options: { checkout?: string; maxStreams?: number } = {}): Promise<FeedService> {
  const maxStreams = options.maxStreams ?? 100;
  const child: ChildProcess = spawn(process.execPath, [...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_PROF] : []), ...npmStartNodeArgs(options.checkout)], {
    cwd: directory,
    env: {
      PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', PETSTORE_LOG_LEVEL: 'silent', PETSTORE_METRICS: 'false',
      PETSTORE_DATABASE: database, PETSTORE_API_KEYS: KEY, PETSTORE_EVENT_STREAMS_MAX: String(maxStreams), PETSTORE_EVENT_STREAMS_MAX_PER_CLIENT: String(maxStreams),
      // Every stream comes from this one address, and the cap's pressure share must not be reached.
      PETSTORE_MAX_CONNECTIONS_PER_CLIENT: String(maxStreams + 64), PETSTORE_MAX_CONNECTIONS: String(2 * (maxStreams + 64)),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  // Read with a listener, not an iterator: leaving an iterator would close the pipe the service still writes to.
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += String(chunk);
      const url = /listening on (http:\/\/[^\s"]+)/.exec(output)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => reject(new Error(`the service did not start: ${output}`)));
  });
  return {
    base,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Streams the log from the start until event `total` arrives; events a second. The consumer looks for
 * that event's `id:` line in the bytes and parses nothing else: the figure is the service's, not a parser's.
 */
export async function catchUp({ base, pid }: FeedService, total: number): Promise<{ eventsPerSecond: number; cpuPerEventUs: number }> {
  const started = performance.now();
  const cpuBefore = cpuMicroseconds(pid);
  const last = Buffer.from(`\nid: ${total}\n`);
  await new Promise<void>((resolve, reject) => {
    const request = get(`${base}/events`, { headers: streamHeaders }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`the catch-up stream was refused: ${response.statusCode}`));
        response.resume();
        return;
      }
      let tail: Buffer = Buffer.alloc(0);
      response.on('data', (chunk: Buffer) => {
        const seen = Buffer.concat([tail, chunk.subarray(0, last.length)]);
        if (seen.includes(last) || chunk.includes(last)) {
          request.destroy();
          resolve();
        }
        tail = chunk.subarray(Math.max(0, chunk.length - last.length));
      });
      response.on('end', () => reject(new Error(`the catch-up stream ended before event ${total}`)));
    });
    request.on('error', reject);
  });
  return { eventsPerSecond: total / ((performance.now() - started) / 1000), cpuPerEventUs: (cpuMicroseconds(pid) - cpuBefore) / total };
}

/**
 * Creates `writes` pets through `writeBase`, one at a time and at most 1,000 a second, each timed from
 * its 201 to its event on a stream held open on `streamBase` from `after`.
 */
export async function liveLatency(writeBase: string, streamBase: string, after: number, writes: number): Promise<LiveFigures> {
  const controller = new AbortController();
  const live = await fetch(`${streamBase}/events?after=${after}`, { headers: streamHeaders, signal: controller.signal });
  if (live.status !== 200) throw new Error(`the live stream was refused: ${live.status}`);
  const arrivals = new Map<string, number>();
  let arrived: (() => void) | undefined;
  const reading = readIds(live.body!, (_id, data) => {
    arrivals.set((JSON.parse(data) as { subject: string }).subject, performance.now());
    arrived?.();
    return false;
  }).catch(() => undefined);
  const answeredAt = new Map<string, number>();
  const started = performance.now();
  for (let index = 0; index < writes; index++) {
    const due = started + index;
    if (performance.now() < due) await pause(due - performance.now());
    const response = await fetch(`${writeBase}/pets`, {
      method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: `live ${index}`, categoryId: 1 }),
    });
    const answered = performance.now();
    if (response.status !== 201) throw new Error(`a live write was answered ${response.status}: ${await response.text()}`);
    answeredAt.set(`pets/${((await response.json()) as { id: number }).id}`, answered);
  }
  const writesPerSecond = writes / ((performance.now() - started) / 1000);
  const deadline = performance.now() + 10_000;
  while ([...answeredAt.keys()].some((subject) => !arrivals.has(subject))) {
    if (performance.now() > deadline) throw new Error('events of acknowledged writes did not arrive on the open stream within 10 s');
    await new Promise<void>((resolve) => {
      arrived = resolve;
      setTimeout(resolve, 100);
    });
  }
  controller.abort();
  await reading;
  const latencies = [...answeredAt].map(([subject, answered]) => Math.max(0, arrivals.get(subject)! - answered)).sort((a, b) => a - b);
  const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))]!;
  return { writes, writesPerSecond, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** The service's resident memory idle, and what `count` open idle streams add to it, in MiB. */
export async function idleStreamsMemory(service: FeedService, after: number, count: number): Promise<{ serviceMib: number; addedMib: number }> {
  await pause(1000);
  const before = residentMib(service.pid);
  const idle = new AbortController();
  const streams = await Promise.all(Array.from({ length: count }, () =>
    fetch(`${service.base}/events?after=${after}`, { headers: streamHeaders, signal: idle.signal })));
  const refused = streams.find((stream) => stream.status !== 200);
  if (refused) throw new Error(`an idle stream was refused: ${refused.status}`);
  await pause(1000);
  const during = residentMib(service.pid);
  idle.abort();
  return { serviceMib: before, addedMib: during - before };
}

/** Two services on a throwaway PostgreSQL cluster: writes through one, timed to a stream on the other. */
async function postgresLiveLatency(directory: string, writes: number): Promise<LiveFigures> {
  const bin = findPostgresBin();
  if (!bin) throw new Error('the feed benchmark on PostgreSQL needs its binaries in /usr/lib/postgresql/*/bin: apt-get install postgresql');
  const cluster = await startPostgresCluster(bin);
  const services: FeedService[] = [];
  try {
    for (let instance = 0; instance < 2; instance++) services.push(await startFeedService(cluster.url, directory));
    const [writer, reader] = services as [FeedService, FeedService];
    return await liveLatency(writer.base, reader.base, 0, writes);
  } finally {
    for (const service of services) await service.stop();
    await cluster.destroy();
  }
}

export async function runFeed(options: FeedOptions): Promise<FeedFigures> {
  const { pets, log } = options;
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-feed-'));
  try {
    const total = seededEvents(pets);
    const service = await startFeedService(await seededCopy(pets, join(directory, 'petstore.db')), directory, { maxStreams: options.idleStreams + 10 });
    try {
      const figures: { eventsPerSecond: number; cpuPerEventUs: number }[] = [];
      for (let round = 0; round < options.catchUpRounds; round++) figures.push(await catchUp(service, total));
      const rounds = figures.map((figure) => figure.eventsPerSecond);
      const eventsPerSecond = median(rounds);
      const cpuPerEventUs = median(figures.map((figure) => figure.cpuPerEventUs));
      log(`feed catch-up: ${total} events to one consumer, ${Math.round(eventsPerSecond)} events/s, ${cpuPerEventUs.toFixed(2)} µs of the service's CPU an event (median of ${rounds.length}; goal ≥ ${CATCH_UP_EVENTS_PER_SECOND} events/s)`);
      const sqlite = await liveLatency(service.base, service.base, total, options.liveWrites);
      log(`feed live (SQLite): ${sqlite.writes} creations at ${Math.round(sqlite.writesPerSecond)}/s, 201 to event p50 ${sqlite.p50Ms.toFixed(2)} ms, p99 ${sqlite.p99Ms.toFixed(2)} ms (goal p99 ≤ ${LIVE_P99_MS.sqlite} ms)`);
      const idle = await idleStreamsMemory(service, total + options.liveWrites, options.idleStreams);
      log(`feed idle: ${options.idleStreams} open streams add ${idle.addedMib.toFixed(1)} MiB to the service's ${idle.serviceMib.toFixed(1)} MiB (goal under ${IDLE_STREAMS_MIB} MB)`);
      const postgres = options.postgres ? await postgresLiveLatency(directory, options.liveWrites) : undefined;
      if (postgres) {
        log(`feed live (PostgreSQL, two instances): ${postgres.writes} creations at ${Math.round(postgres.writesPerSecond)}/s, 201 to event p50 ${postgres.p50Ms.toFixed(2)} ms, p99 ${postgres.p99Ms.toFixed(2)} ms (goal p99 ≤ ${LIVE_P99_MS.postgres} ms)`);
      }
      return {
        catchUp: { events: total, rounds, eventsPerSecond, cpuPerEventUs },
        live: { sqlite, ...(postgres ? { postgres } : {}) },
        idle: { streams: options.idleStreams, ...idle },
      };
    } finally {
      await service.stop();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** `--against`: the catch-up of another checkout's service and this one's, rounds alternating, on copies of one seed. */
async function compareCatchUp(pets: number, against: string, rounds: number, log: (line: string) => void): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-feed-'));
  const services: FeedService[] = [];
  try {
    const total = seededEvents(pets);
    services.push(await startFeedService(await seededCopy(pets, join(directory, 'against.db')), directory, { checkout: against }));
    services.push(await startFeedService(await seededCopy(pets, join(directory, 'this.db')), directory));
    const figures: [{ eventsPerSecond: number; cpuPerEventUs: number }[], { eventsPerSecond: number; cpuPerEventUs: number }[]] = [[], []];
    const shown = (figure: { eventsPerSecond: number; cpuPerEventUs: number }) => `${Math.round(figure.eventsPerSecond)} events/s, ${figure.cpuPerEventUs.toFixed(2)} µs CPU an event`;
    for (let round = 0; round < rounds; round++) {
      // Alternating which goes first, so that neither always meets the machine as the other left it.
      for (const which of round % 2 === 0 ? [0, 1] as const : [1, 0] as const) figures[which].push(await catchUp(services[which]!, total));
      log(`round ${round + 1}: ${against} ${shown(figures[0].at(-1)!)}; this checkout ${shown(figures[1].at(-1)!)}`);
    }
    const medians = figures.map((each) => ({
      eventsPerSecond: median(each.map((figure) => figure.eventsPerSecond)),
      cpuPerEventUs: median(each.map((figure) => figure.cpuPerEventUs)),
    })) as [{ eventsPerSecond: number; cpuPerEventUs: number }, { eventsPerSecond: number; cpuPerEventUs: number }];
    log(`catch-up of ${total} events, medians of ${rounds}: ${against} ${shown(medians[0])}; this checkout ${shown(medians[1])}; ` +
      `ratio ${(medians[1].eventsPerSecond / medians[0].eventsPerSecond).toFixed(2)} in events/s, ${(medians[0].cpuPerEventUs / medians[1].cpuPerEventUs).toFixed(2)} in CPU an event`);
  } finally {
    for (const service of services) await service.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[1] === import.meta.filename) {
  const argv = process.argv.slice(2);
  const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  const pets = Number(argv[0]?.startsWith('--') ? 100_000 : argv[0] ?? 100_000);
  if (!Number.isInteger(pets) || pets < 1) throw new Error(`pets must be a positive integer, got ${argv[0]}`);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const against = option('--against');
  const rounds = Number(option('--rounds') ?? 5);
  if (against !== undefined) await compareCatchUp(pets, resolve(against), rounds, log);
  else await runFeed({ pets, catchUpRounds: rounds, liveWrites: 1000, idleStreams: 1000, postgres: !argv.includes('--no-postgres'), log });
}
