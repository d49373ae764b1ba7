// A claim's fixed and per-event costs, quietly: one consumer drains a fresh group of the seeded log over HTTP
// (each claim carrying the last batch's acks, as `consume` does), with claims of 100 and of 1 000 in turn, so
// that the two separate by subtraction; the service's CPU from /proc, in all and by thread (the first is the
// event loop, the others V8's helpers: garbage collection). One consumer: each claim is a commit of its own.
//   node --import tsx bench/claim-costs.ts [rounds]
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicroseconds } from './http-load.ts';
import { seededEvents, startFeedService } from './event-feed.ts';
import { seededCopy } from './seed.ts';
import { callGroup } from './consumer-groups.ts';

const PETS = 20_000;
const rounds = Number(process.argv[2] ?? 2);
const total = seededEvents(PETS);
const directory = mkdtempSync(join(tmpdir(), 'petstore-claim-costs-'));
const service = await startFeedService(await seededCopy(PETS, join(directory, 'petstore.db')), directory);
const { base, pid } = service;

const call = (method: string, path: string, body?: unknown) => callGroup(base, method, path, body);

const threadCpu = () => new Map(readdirSync(`/proc/${pid}/task`).map((thread) => [Number(thread), cpuMicroseconds(pid, Number(thread))]));

interface Drain { readonly max: number; readonly claims: number; readonly cpuPerClaimUs: number; readonly eventLoopPerClaimUs: number; readonly helpersPerClaimUs: number; readonly eventsPerSecond: number }

async function drain(name: string, max: number): Promise<Drain> {
  await call('PUT', name, {});
  const before = threadCpu();
  const started = performance.now();
  let leases: string[] = [];
  let acked = 0;
  let claims = 0;
  while (acked < total) {
    const answer = (await call('POST', `${name}/claims`, { consumer: 'c', max, waitMs: 100, ...(leases.length > 0 ? { acks: leases } : {}) })) as { claims: { lease: string }[]; acked?: number };
    claims += 1;
    acked += answer.acked ?? 0;
    leases = answer.claims.map((claim) => claim.lease);
    if (leases.length === 0 && acked < total) throw new Error(`${name}: an empty claim with ${total - acked} events unacked`);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = threadCpu();
  await call('DELETE', name);
  let all = 0;
  for (const [thread, cpu] of after) all += cpu - (before.get(thread) ?? 0);
  const eventLoop = after.get(pid)! - before.get(pid)!;
  return { max, claims, cpuPerClaimUs: all / claims, eventLoopPerClaimUs: eventLoop / claims, helpersPerClaimUs: (all - eventLoop) / claims, eventsPerSecond: total / seconds };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
try {
  const drains: Drain[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const max of round % 2 === 0 ? [100, 1000] : [1000, 100]) {
      const result = await drain(`costs-${round}-${max}`, max);
      drains.push(result);
      console.log(`claims of ${max}: ${result.claims} claims, ${Math.round(result.cpuPerClaimUs)} µs of CPU a claim (event loop ${Math.round(result.eventLoopPerClaimUs)}, helpers ${Math.round(result.helpersPerClaimUs)}), ${Math.round(result.eventsPerSecond)} events/s`);
    }
  }
  const of = (max: number, field: keyof Drain) => median(drains.filter((result) => result.max === max).map((result) => result[field]));
  for (const field of ['cpuPerClaimUs', 'eventLoopPerClaimUs'] as const) {
    const perEvent = (of(1000, field) - of(100, field)) / 900;
    console.log(`${field === 'cpuPerClaimUs' ? 'the service' : 'its event loop'}: ${Math.round(of(100, field) - 100 * perEvent)} µs a claim and ${perEvent.toFixed(1)} µs an event (medians of ${rounds}, ${total} events, one consumer)`);
  }
} finally {
  await service.stop();
  rmSync(directory, { recursive: true, force: true });
}
