// `npm run bench:feed [-- pets]`: the event feed over a seeded SQLite file (100,000 pets unless told
// otherwise; seeds are cached in bench/.data), the service as `npm start` runs it in a process of its own:
// - catch-up: the whole log streamed to one consumer (Server-Sent Events), in events a second;
// - live: 1,000 creations one after another, each timed from its 201 to its event arriving on an
//   open stream (p50, p99).
// Goals (issue 14): catch-up ≥ 200,000 events/s on the large seed; live p99 ≤ 10 ms on SQLite.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmStartNodeArgs } from '../scripts/start-command.ts';
import { seedStatus, seededCopy } from './seed.ts';

const KEY = 'bench-feed-key-0123456789';
const headers = { authorization: `Bearer ${KEY}` };
const pets = Number(process.argv[2] ?? 100_000);
if (!Number.isInteger(pets) || pets < 1) throw new Error(`pets must be a positive integer, got ${process.argv[2]}`);
const LIVE_WRITES = 1000;

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
} finally {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rmSync(directory, { recursive: true, force: true });
}
