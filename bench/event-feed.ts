// `npm run bench:feed [-- pets]`: the event feed over a seeded SQLite file (100,000 pets unless told
// otherwise; seeds are cached in bench/.data), the service as `npm start` runs it in a process of its own:
// - catch-up: the whole log streamed to one consumer (Server-Sent Events), in events a second;
// - live: 1,000 creations one after another, each timed from its 201 to its event arriving on an
//   open stream (p50, p99);
// - idle: the service's resident memory with 1,000 streams open and idle, against none.
// Goals (issue 14): catch-up ≥ 200,000 events/s on the large seed; live p99 ≤ 10 ms on SQLite; idle
// streams under 50 MB over the idle service.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmStartNodeArgs } from '../scripts/start-command.ts';
import { seedStatus, seededCopy } from './seed.ts';

const KEY = 'bench-feed-key-0123456789';
const headers = { authorization: `Bearer ${KEY}` };
const pets = Number(process.argv[2] ?? 100_000);
if (!Number.isInteger(pets) || pets < 1) throw new Error(`pets must be a positive integer, got ${process.argv[2]}`);
const LIVE_WRITES = 1000;
const IDLE_STREAMS = 1000;

/** A process's resident memory in MiB (Linux). */
function residentMib(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kib / 1024;
}

/** The seed's log: one event a pet, and a status change for the ones that were sold. */
function seededEvents(count: number): number {
  let events = 0;
  for (let id = 1; id <= count; id++) events += seedStatus(id).added === seedStatus(id).now ? 1 : 2;
  return events;
}

/** Reads an SSE body, telling `onId` each `id:` as its message completes. */
async function readIds(body: ReadableStream<Uint8Array>, onId: (id: number, data: string) => boolean): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!block.startsWith('id: ')) continue;
      const newline = block.indexOf('\n');
      if (onId(Number(block.slice(4, newline)), block.slice(newline + 7))) return;
    }
  }
}

const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-feed-'));
const child = spawn(process.execPath, npmStartNodeArgs(), {
  cwd: directory,
  env: {
    PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', PETSTORE_LOG_LEVEL: 'silent', PETSTORE_METRICS: 'false',
    PETSTORE_DATABASE: await seededCopy(pets, join(directory, 'petstore.db')), PETSTORE_API_KEYS: KEY,
    // Room for the idle streams beside the two streams before them, which the service may not have let go of yet.
    PETSTORE_EVENT_STREAMS_MAX: String(IDLE_STREAMS + 10),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  // Read with a listener, not an iterator: leaving an iterator would close the pipe the service still writes to.
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += String(chunk);
      const url = /listening on (\S+)/.exec(output)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', () => reject(new Error(`the service did not start: ${output}`)));
  });
  const total = seededEvents(pets);

  const started = performance.now();
  const catchUp = await fetch(`${base}/events`, { headers: { ...headers, accept: 'text/event-stream' } });
  await readIds(catchUp.body!, (id) => id >= total);
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`catch-up: ${total} events in ${seconds.toFixed(2)} s, ${Math.round(total / seconds)} events/s (goal ≥ 200,000 on the large seed)\n`);

  const controller = new AbortController();
  const live = await fetch(`${base}/events?after=${total}`, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
  const arrivals = new Map<string, number>();
  let arrived: (() => void) | undefined;
  const reading = readIds(live.body!, (_id, data) => {
    arrivals.set((JSON.parse(data) as { subject: string }).subject, performance.now());
    arrived?.();
    return false;
  }).catch(() => undefined);
  const latencies: number[] = [];
  for (let index = 0; index < LIVE_WRITES; index++) {
    const response = await fetch(`${base}/pets`, {
      method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: `live ${index}`, categoryId: 1 }),
    });
    const answered = performance.now();
    const subject = `pets/${((await response.json()) as { id: number }).id}`;
    while (!arrivals.has(subject)) await new Promise<void>((resolve) => (arrived = resolve));
    latencies.push(Math.max(0, arrivals.get(subject)! - answered));
  }
  controller.abort();
  await reading;
  latencies.sort((a, b) => a - b);
  const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))]!.toFixed(2);
  process.stdout.write(`live: ${LIVE_WRITES} creations, from 201 to the event on an open stream: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms (goal p99 ≤ 10 ms)\n`);

  const head = total + LIVE_WRITES;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));
  await settle();
  const before = residentMib(child.pid!);
  const idle = new AbortController();
  const streams = await Promise.all(Array.from({ length: IDLE_STREAMS }, () =>
    fetch(`${base}/events?after=${head}`, { headers: { ...headers, accept: 'text/event-stream' }, signal: idle.signal })));
  if (streams.some((stream) => stream.status !== 200)) throw new Error(`an idle stream was refused: ${streams.find((stream) => stream.status !== 200)?.status}`);
  await settle();
  const during = residentMib(child.pid!);
  idle.abort();
  process.stdout.write(`idle: ${IDLE_STREAMS} open streams add ${(during - before).toFixed(1)} MiB to the service's resident memory (${before.toFixed(1)} → ${during.toFixed(1)} MiB; goal under 50 MB)\n`);
} finally {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rmSync(directory, { recursive: true, force: true });
}
