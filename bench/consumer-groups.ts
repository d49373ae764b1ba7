// A consumer group's throughput against the feed's catch-up, the service as `npm start` runs it over a
// seeded SQLite file (seeds cached in bench/.data): in each round, alternating which goes first,
// - feed: the whole log streamed to one consumer (the feed's catch-up, bench/event-feed.ts);
// - group: a new group from the beginning of the log, four consumers over HTTP each claiming up to 100
//   events at a time and acking every event it claimed with its next claim (one request a batch, as the
//   client's `consume` does; `--acks-apart`: an acks request after each claim), until the checkpoint reaches the head;
// - the same group drained with claims of up to 1,000 (the largest a claim may ask for);
// in events a second and the service's CPU an event; medians of the rounds and their ratio. Each round's
// feed figure is the catch-up repeated for at least a second (one catch-up of the 24,000 events is under
// 100 ms, and varied threefold from round to round alone), and one round before the measured ones warms
// both up (its figures dropped). With
// `--postgres`, the same again with the service on a throwaway PostgreSQL cluster seeded with the same log.
// Every claim and every ack is durable before it is answered: on SQLite one transaction synced to disk
// (WAL, synchronous=FULL; the claims and acks waiting for the writer meanwhile share it), on PostgreSQL one
// committed transaction (synchronous_commit on).
// `npm run bench` runs it (see run.ts); on its own:
//   npm run bench:groups [-- <pets>] [--rounds N] [--postgres] [--acks-apart]
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicroseconds } from './http-load.ts';
import { GROUP_LIMITS } from '../application/index.ts';
import { catchUp, FEED_BENCH_KEY, seededEvents, startFeedService } from './event-feed.ts';
import type { FeedService } from './event-feed.ts';
import { seededCopy } from './seed.ts';
import { findPostgresBin, startPostgresCluster } from '../scripts/postgres-cluster.ts';
import type { PostgresCluster } from '../scripts/postgres-cluster.ts';
import { clusterCpuMicroseconds, seedPostgres } from './postgres-vs-sqlite.ts';

const headers = { authorization: `Bearer ${FEED_BENCH_KEY}`, 'content-type': 'application/json' };
const CONSUMERS = 4;
/** How long a round's feed figure lasts at least: a group's drain of the same log lasts about as long. */
const FEED_SAMPLE_MS = 1000;
/** The claims, and the largest a claim may ask for. */
const CLAIM_MAX = 100;
const LARGE_CLAIM_MAX = GROUP_LIMITS.claimMax;

export interface GroupBenchOptions {
  readonly pets: number;
  readonly rounds: number;
  /** Also on a throwaway PostgreSQL cluster (needs the machine's PostgreSQL). */
  readonly postgres?: boolean;
  readonly log: (line: string) => void;
  /** How a consumer acks a batch: with its next claim (the default, as `consume` does), or in an acks request of its own. */
  readonly acksWith?: AcksWith;
}

type AcksWith = 'claim' | 'request';

interface Rate {
  readonly eventsPerSecond: number;
  readonly cpuPerEventUs: number;
  /** The consumers' own CPU an event (this process: requests, answers parsed), for a group's drain. */
  readonly consumersCpuPerEventUs?: number;
  /** PostgreSQL's own CPU an event (its server and backends), on PostgreSQL. */
  readonly databaseCpuPerEventUs?: number;
}

export interface GroupFigures {
  readonly events: number;
  readonly consumers: number;
  readonly feed: Rate & { readonly rounds: number[] };
  readonly group: Rate & { readonly rounds: number[] };
  /** The group's events a second over the feed's, medians of the rounds. */
  readonly ratio: number;
  /** The same group drained with the largest claims (`claimMax` events each); absent from results recorded before they were measured. */
  readonly largeClaims?: Rate & { readonly claimMax: number; readonly rounds: number[]; readonly ratio: number };
  /** The same on PostgreSQL, when asked for. */
  readonly postgres?: Omit<GroupFigures, 'postgres'>;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Kept-alive connections, one a consumer in turn. */
const agent = new http.Agent({ keepAlive: true });

/**
 * A request of a group over node:http, its JSON answer parsed whole (leases and events, as a worker would):
 * fetch's own work a request took the consumers twice the CPU (14–16 µs an event against 7–8 with claims of
 * 100), on the same two cores as the service, where the feed's consumer parses nothing.
 */
export function callGroup(base: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const length = text === undefined ? {} : { 'content-length': String(Buffer.byteLength(text)) };
  return new Promise((resolve, reject) => {
    const request = http.request(`${base}/consumer-groups/${path}`, { method, agent, headers: { ...headers, ...length } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const answer = Buffer.concat(chunks).toString();
        const status = response.statusCode ?? 0;
        if (status < 200 || status >= 300) reject(new Error(`${method} ${path}: ${status} ${answer}`));
        else resolve(status === 204 ? undefined : JSON.parse(answer));
      });
    });
    request.on('error', reject);
    request.end(text);
  });
}
const call = callGroup;

/** A fresh group drained by four consumers, each acking every event it claims; events a second until the checkpoint is at the head. */
async function drainGroup({ base, pid }: FeedService, name: string, total: number, claimMax: number, acksWith: AcksWith, databaseCpu?: () => number): Promise<Rate> {
  await call(base, 'PUT', name, {});
  const started = performance.now();
  const consumersBefore = process.cpuUsage();
  const cpuBefore = cpuMicroseconds(pid);
  const databaseBefore = databaseCpu?.();
  let acked = 0;
  const consumer = async (index: number) => {
    // The last batch's leases, acked by the next claim (as the client's `consume` does) or by an acks request of their own.
    let leases: string[] = [];
    const ack = async () => {
      const { acked: done } = (await call(base, 'POST', `${name}/acks`, { leases })) as { acked: number };
      acked += done;
      leases = [];
    };
    while (acked + leases.length < total) {
      const carried = acksWith === 'claim' && leases.length > 0 ? leases : undefined;
      const answer = (await call(base, 'POST', `${name}/claims`, { consumer: `c${index}`, max: claimMax, waitMs: 100, ...(carried ? { acks: carried } : {}) })) as { claims: { lease: string }[]; acked?: number };
      if (carried) {
        acked += answer.acked ?? 0;
        leases = [];
      }
      leases = [...leases, ...answer.claims.map((claim) => claim.lease)];
      if (leases.length > 0 && acksWith === 'request') await ack();
    }
    if (leases.length > 0) await ack();
  };
  await Promise.all(Array.from({ length: CONSUMERS }, (_, index) => consumer(index)));
  const consumers = process.cpuUsage(consumersBefore);
  const rate = {
    eventsPerSecond: total / ((performance.now() - started) / 1000), cpuPerEventUs: (cpuMicroseconds(pid) - cpuBefore) / total,
    consumersCpuPerEventUs: (consumers.user + consumers.system) / total,
    ...(databaseCpu ? { databaseCpuPerEventUs: (databaseCpu() - databaseBefore!) / total } : {}),
  };
  const { checkpoint, head } = (await call(base, 'GET', name)) as { checkpoint: number; head: number };
  if (checkpoint !== head || acked !== total) throw new Error(`group ${name}: checkpoint ${checkpoint}, head ${head}, ${acked} of ${total} acked`);
  await call(base, 'DELETE', name);
  return rate;
}

/** The feed's catch-up of the log, repeated until `FEED_SAMPLE_MS` passed: events a second and CPU an event over them all. */
async function feedSample(service: FeedService, total: number): Promise<Rate> {
  const started = performance.now();
  let events = 0;
  let cpu = 0;
  do {
    const rate = await catchUp(service, total);
    events += total;
    cpu += rate.cpuPerEventUs * total;
  } while (performance.now() - started < FEED_SAMPLE_MS);
  return { eventsPerSecond: events / ((performance.now() - started) / 1000), cpuPerEventUs: cpu / events };
}

/** Rounds alternating the feed's catch-up and a fresh group drained, on one running service. */
async function measure(service: FeedService, total: number, options: GroupBenchOptions, backend: string, databaseCpu?: () => number): Promise<Omit<GroupFigures, 'postgres'>> {
  const feed: Rate[] = [];
  const group: Rate[] = [];
  const large: Rate[] = [];
  const { rounds, log } = options;
  const acksWith = options.acksWith ?? 'claim';
  // Warmed up alike, so that the first measured round is not the only one run cold.
  await catchUp(service, total);
  await drainGroup(service, 'bench-warm-up', total, CLAIM_MAX, acksWith, databaseCpu);
  await drainGroup(service, 'bench-warm-up-large', total, LARGE_CLAIM_MAX, acksWith, databaseCpu);
  for (let round = 0; round < rounds; round++) {
    // Alternating which goes first, so that neither always meets the machine as the other left it.
    const order = round % 2 === 0 ? ['feed', 'group', 'large'] : ['large', 'group', 'feed'];
    for (const which of order) {
      if (which === 'feed') feed.push(await feedSample(service, total));
      else if (which === 'group') group.push(await drainGroup(service, `bench-${round}`, total, CLAIM_MAX, acksWith, databaseCpu));
      else large.push(await drainGroup(service, `bench-large-${round}`, total, LARGE_CLAIM_MAX, acksWith, databaseCpu));
    }
    log(
      `${backend} round ${round + 1}: feed ${Math.round(feed.at(-1)!.eventsPerSecond)} events/s; group of ${CONSUMERS} ${Math.round(group.at(-1)!.eventsPerSecond)} events/s ` +
      `(claims of ${CLAIM_MAX}), ${Math.round(large.at(-1)!.eventsPerSecond)} events/s (claims of ${LARGE_CLAIM_MAX})`,
    );
  }
  const summary = (rates: Rate[]) => ({
    rounds: rates.map((rate) => rate.eventsPerSecond),
    eventsPerSecond: median(rates.map((rate) => rate.eventsPerSecond)),
    cpuPerEventUs: median(rates.map((rate) => rate.cpuPerEventUs)),
    ...(rates.every((rate) => rate.consumersCpuPerEventUs !== undefined) ? { consumersCpuPerEventUs: median(rates.map((rate) => rate.consumersCpuPerEventUs!)) } : {}),
    ...(databaseCpu ? { databaseCpuPerEventUs: median(rates.map((rate) => rate.databaseCpuPerEventUs!)) } : {}),
  });
  const figures = { events: total, consumers: CONSUMERS, feed: summary(feed), group: summary(group) };
  const ratio = figures.group.eventsPerSecond / figures.feed.eventsPerSecond;
  const largeClaims = { ...summary(large), claimMax: LARGE_CLAIM_MAX, ratio: median(large.map((rate) => rate.eventsPerSecond)) / figures.feed.eventsPerSecond };
  const line = (claimMax: number, rate: Rate, against: number) => {
    const database = rate.databaseCpuPerEventUs === undefined ? '' : ` (and ${rate.databaseCpuPerEventUs.toFixed(1)} µs of PostgreSQL's)`;
    const consumers = rate.consumersCpuPerEventUs === undefined ? '' : `, the consumers' own ${rate.consumersCpuPerEventUs.toFixed(1)} µs`;
    log(
      `consumer group on ${backend}: ${total} events through ${CONSUMERS} consumers (claims of ${claimMax}, every event acked ${acksWith === 'request' ? 'in an acks request of its own' : 'with the next claim'}, each claim and ack durable) at ` +
      `${Math.round(rate.eventsPerSecond)} events/s, ${rate.cpuPerEventUs.toFixed(1)} µs of the service's CPU an event${database}${consumers}; ` +
      `the feed's catch-up ${Math.round(figures.feed.eventsPerSecond)} events/s, ${figures.feed.cpuPerEventUs.toFixed(2)} µs an event; ratio ${against.toFixed(3)} (medians of ${rounds})`,
    );
  };
  line(CLAIM_MAX, figures.group, ratio);
  line(LARGE_CLAIM_MAX, largeClaims, largeClaims.ratio);
  return { ...figures, ratio, largeClaims };
}

export async function runGroupBench(options: GroupBenchOptions): Promise<GroupFigures> {
  const { pets } = options;
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-groups-'));
  try {
    const total = seededEvents(pets);
    const service = await startFeedService(await seededCopy(pets, join(directory, 'petstore.db')), directory);
    let figures: GroupFigures;
    try {
      figures = await measure(service, total, options, 'SQLite');
    } finally {
      await service.stop();
    }
    if (!options.postgres) return figures;
    const bin = findPostgresBin();
    if (!bin) throw new Error('--postgres needs the machine\'s PostgreSQL (initdb and pg_ctl)');
    // Durable (fsync and synchronous_commit on), as the figures say: the test settings would skip every fsync.
    const cluster: PostgresCluster = await startPostgresCluster(bin, { durable: true });
    try {
      await seedPostgres(pets, cluster.url);
      const onPostgres = await startFeedService(cluster.url, directory);
      try {
        return { ...figures, postgres: await measure(onPostgres, total, options, 'PostgreSQL', () => clusterCpuMicroseconds(cluster)) };
      } finally {
        await onPostgres.stop();
      }
    } finally {
      await cluster.destroy();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[1] === import.meta.filename) {
  const argv = process.argv.slice(2);
  const pets = Number(argv[0]?.startsWith('--') ? 20_000 : argv[0] ?? 20_000);
  if (!Number.isInteger(pets) || pets < 1) throw new Error(`pets must be a positive integer, got ${argv[0]}`);
  const rounds = Number(argv.includes('--rounds') ? argv[argv.indexOf('--rounds') + 1] : 3);
  await runGroupBench({
    pets, rounds, postgres: argv.includes('--postgres'), acksWith: argv.includes('--acks-apart') ? 'request' : 'claim', log: (line) => process.stdout.write(`${line}\n`),
  });
}
