// Fairness between tenants: key A creates pets (autocannon from its own core) while key B's webhook
// subscriptions work in the background, on the service as `npm start` runs it (pinned to core 0) over a
// seeded SQLite file. Three phases a round:
// - alone: no subscriptions;
// - live: 20 subscriptions of B (batchSize 100) delivering A's new events live to a receiver on loopback;
// - replays: the same 20, each replaying from 0 the whole seeded log (1.2 events a pet).
// Each phase: A's creations a second, /livez p50 (a probe every 20 ms from this process), the events the
// receiver acknowledged a second, and the service's CPU a delivered event (beyond what A's creations cost
// alone). Rounds alternate the order of the phases; figures are medians over the rounds.
// Goal: A keeps ≥ 0.5× its creations a second alone, and /livez p50 ≤ 20 ms, while deliveries keep moving.
//   npm run bench:fairness [-- <pets> <seconds a phase> <rounds>]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_API_KEY, canPin, cpuMicroseconds, median, probeLivez, startLoadClient, startService, stop } from './http-load.ts';
import { seededCopy } from './seed.ts';

const TENANT_B_KEY = 'bench-fairness-tenant-b-0123456789';
const SUBSCRIPTIONS = 20;
const BATCH_SIZE = 100;
const CONNECTIONS = 10;
const PROBE_EVERY_MS = 20;
/** Goals of the fairness scenario. */
export const FAIR_CREATION_RATIO = 0.5;
export const FAIR_LIVEZ_P50_MS = 20;

const PHASES = ['alone', 'live', 'replays'] as const;
type Phase = (typeof PHASES)[number];

export interface PhaseFigures {
  readonly creationsPerSecond: number;
  readonly livezP50Ms: number;
  readonly deliveredPerSecond: number;
  /** Service CPU during the phase, microseconds, per creation (alone) or per delivered event beyond A's creations (others). */
  readonly cpuMicroseconds: number;
}

export interface FairnessOptions {
  readonly pets: number;
  readonly seconds: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
}

export async function runFairness({ pets, seconds, rounds, log }: FairnessOptions): Promise<Record<Phase, PhaseFigures>> {
  const pin = canPin();
  if (!pin) log('note: taskset or a second core is missing; the processes are not pinned');
  let delivered = 0;
  const receiver = createServer((request, response) => {
    // Named by the positions it carries (msg_<subscription>_<first>_<last>): the log is dense on SQLite.
    const match = /_(\d+)_(\d+)$/.exec(String(request.headers['webhook-id']));
    request.resume();
    request.on('end', () => {
      delivered += match ? Number(match[2]) - Number(match[1]) + 1 : 1;
      response.writeHead(204).end();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-fairness-'));
  const client = startLoadClient(pin);
  const database = await seededCopy(pets, join(directory, 'petstore.db'));
  const service = await startService(database, directory, pin, undefined, {
    PETSTORE_API_KEYS: `${BENCH_API_KEY},${TENANT_B_KEY}`, PETSTORE_RATE_LIMIT: 'off', PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true', PETSTORE_LOG_LEVEL: 'warn',
  });
  const tenantB = { authorization: `Bearer ${TENANT_B_KEY}`, 'content-type': 'application/json' };
  const base = `${service.origin}/v1`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, { method, headers: tenantB, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
  /** Deletes B's subscriptions, then makes what the phase needs. */
  const prepare = async (phase: Phase) => {
    for (const { id } of (await call('GET', '/webhooks')) as { id: string }[]) await call('DELETE', `/webhooks/${id}`);
    if (phase === 'alone') return;
    for (let index = 0; index < SUBSCRIPTIONS; index++) {
      const { id } = (await call('POST', '/webhooks', { url: receiverUrl, batchSize: BATCH_SIZE })) as { id: string };
      if (phase === 'replays') await call('POST', `/webhooks/${id}/replay`, { after: 0 });
    }
  };
  const measure = async (phase: Phase, creationCpu: number | undefined) => {
    await prepare(phase);
    const probe = probeLivez(service.origin, PROBE_EVERY_MS);
    const cpuBefore = cpuMicroseconds(service.child.pid!);
    const deliveredBefore = delivered;
    const result = await client.run({
      url: `${base}/pets`, method: 'POST', headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Tenant A', categoryId: 1 }), connections: CONNECTIONS, seconds,
    });
    const cpu = cpuMicroseconds(service.child.pid!) - cpuBefore;
    const deliveredEvents = delivered - deliveredBefore;
    const livez = await probe.stop();
    if (result.non2xx > 0 || result.errors > 0) log(`  note: ${phase}: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
    const background = Math.max(0, cpu - (creationCpu ?? 0) * result.total);
    return {
      creationsPerSecond: result.requestsPerSecond,
      livezP50Ms: median(livez),
      deliveredPerSecond: deliveredEvents / seconds,
      cpuMicroseconds: phase === 'alone' ? cpu / result.total : deliveredEvents > 0 ? background / deliveredEvents : NaN,
    };
  };
  const collected: Record<Phase, PhaseFigures[]> = { alone: [], live: [], replays: [] };
  try {
    log(`fairness: ${pets} pets seeded, ${SUBSCRIPTIONS} subscriptions of key B (batchSize ${BATCH_SIZE}), key A creating on ${CONNECTIONS} connections, ${seconds} s a phase, ${rounds} rounds`);
    await measure('alone', undefined); // warm-up
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? PHASES : [...PHASES].reverse();
      const figures: Partial<Record<Phase, PhaseFigures>> = {};
      // CPU a creation alone is needed first: in a reversed round it is taken from the last round's.
      const creationCpu = () => figures.alone?.cpuMicroseconds ?? collected.alone.at(-1)?.cpuMicroseconds ?? 0;
      for (const phase of order) figures[phase] = await measure(phase, phase === 'alone' ? undefined : creationCpu());
      for (const phase of PHASES) {
        collected[phase].push(figures[phase]!);
        log(`  round ${round + 1} ${phase}: ${describe(figures[phase]!, phase)}`);
      }
    }
    await prepare('alone');
  } finally {
    client.stop();
    await stop(service);
    receiver.closeAllConnections();
    receiver.close();
    rmSync(directory, { recursive: true, force: true });
  }
  const medians = Object.fromEntries(PHASES.map((phase) => [phase, {
    creationsPerSecond: median(collected[phase].map((figure) => figure.creationsPerSecond)),
    livezP50Ms: median(collected[phase].map((figure) => figure.livezP50Ms)),
    deliveredPerSecond: median(collected[phase].map((figure) => figure.deliveredPerSecond)),
    cpuMicroseconds: median(collected[phase].map((figure) => figure.cpuMicroseconds)),
  }])) as Record<Phase, PhaseFigures>;
  log(`medians over ${rounds} rounds:`);
  for (const phase of PHASES) {
    // Each round's phase against that round's alone, then the median: the machine's load drifts between rounds.
    const ratio = median(collected[phase].map((figure, round) => figure.creationsPerSecond / collected.alone[round]!.creationsPerSecond));
    log(`  ${phase.padEnd(7)} ${describe(medians[phase], phase)}; ${ratio.toFixed(2)}x alone (median of the rounds' ratios; goal ≥ ${FAIR_CREATION_RATIO}x, /livez p50 ≤ ${FAIR_LIVEZ_P50_MS} ms)`);
  }
  return medians;
}

function describe(figures: PhaseFigures, phase: Phase): string {
  // Beyond what A's creations cost alone: within the noise of that estimate it reads as n/a.
  const perEvent = Number.isFinite(figures.cpuMicroseconds) && figures.cpuMicroseconds > 0 ? `${figures.cpuMicroseconds.toFixed(1)} µs` : 'n/a';
  const cpu = phase === 'alone' ? `${figures.cpuMicroseconds.toFixed(0)} µs CPU a creation` : `${perEvent} CPU a delivered event`;
  return `A ${figures.creationsPerSecond.toFixed(0)} creations/s, /livez p50 ${figures.livezP50Ms.toFixed(1)} ms, ${figures.deliveredPerSecond.toFixed(0)} events delivered/s, ${cpu}`;
}

if (process.argv[1]?.endsWith('fairness.ts')) {
  await runFairness({ pets: Number(process.argv[2] ?? 150_000), seconds: Number(process.argv[3] ?? 5), rounds: Number(process.argv[4] ?? 3), log: (line) => console.log(line) });
}
