// Waiting claims beside another tenant's writes: key A creates pets (autocannon from its own core) on the
// service as `npm start` runs it (pinned to core 0) over a seeded SQLite file, in two phases a round:
// - alone: nothing else;
// - waiting: 1,000 claimers of 10 other keys (one group each, of a type A never writes, 100 claimers a
//   key), spread over the client addresses 127.0.0.2 to .5, each claiming with waitMs 30 s and claiming
//   again when answered; one refused past the caps (429, or 503 past the instance's) waits its Retry-After and tries again, as a
//   client would. A's load comes from 127.0.0.1: an address is one client, with a connection cap of its own.
// Each phase: A's creations a second, /livez p50 (a probe every 20 ms from this process), and how many
// claims were open (sent, not answered) at its end. Rounds alternate the phases' order; figures are medians.
// Goal: A keeps ≥ 0.5× its creations a second alone, /livez p50 ≤ 50 ms.
//   node --import tsx bench/waiting-claims.ts [<claimers> <seconds a phase> <rounds>]
import { setMaxListeners } from 'node:events';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_API_KEY, canPin, median, probeLivez, startLoadClient, startService, stop } from './http-load.ts';
import { seededCopy } from './seed.ts';

const KEYS = Array.from({ length: 10 }, (_, index) => `bench-waiting-claims-key-${index}-0123456789`);
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const CONNECTIONS = 10;
/** The groups take only status changes, which A's creations never write: their claims wait, and A's commits are looked at but not handed out. */
const WAITED_TYPE = 'com.petstore.pet.status-changed.v1';
const PROBE_EVERY_MS = 20;
const CREATION_RATIO_GOAL = 0.5;
const LIVEZ_P50_GOAL_MS = 50;

const [claimers = 1000, seconds = 5, rounds = 3] = process.argv.slice(2).map(Number);
const pin = canPin();
if (!pin) console.log('note: taskset or a second core is missing; the processes are not pinned');
const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-waiting-claims-'));
const client = startLoadClient(pin);
const database = await seededCopy(1000, join(directory, 'petstore.db'));
const service = await startService(database, directory, pin, undefined, {
  PETSTORE_API_KEYS: [BENCH_API_KEY, ...KEYS].join(','), PETSTORE_RATE_LIMIT: 'off', PETSTORE_LOG_LEVEL: 'warn',
});
const { port } = new URL(service.origin);

/** One POST from `localAddress` with `key`; resolves with its status and Retry-After, or undefined when aborted or failed. */
const post = (path: string, key: string, body: unknown, localAddress: string, signal: AbortSignal) =>
  new Promise<{ status: number; retryAfter: number } | undefined>((resolve) => {
    const text = JSON.stringify(body);
    const sent = request({
      host: '127.0.0.1', port, path: `/v1${path}`, method: 'POST', localAddress, signal, agent: false,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
    }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: Number(response.headers['retry-after'] ?? 1) }));
      response.on('error', () => resolve(undefined));
    });
    sent.on('error', () => resolve(undefined));
    sent.end(text);
  });

const measure = async (phase: 'alone' | 'waiting') => {
  const stopClaims = new AbortController();
  setMaxListeners(claimers + 10, stopClaims.signal);
  let waiting = 0;
  let refused = 0;
  let failed = 0;
  const claimer = async (index: number) => {
    const key = KEYS[index % KEYS.length]!;
    const address = ADDRESSES[index % ADDRESSES.length]!;
    while (!stopClaims.signal.aborted) {
      waiting++;
      const answer = await post('/consumer-groups/waiting/claims', key, { consumer: `c${index}`, waitMs: 30_000 }, address, stopClaims.signal);
      waiting--;
      if (!answer) {
        // Refused at the door (its address's connection cap) or reset: a client tries again a second later.
        if (stopClaims.signal.aborted) return;
        failed++;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      if (answer.status === 429 || answer.status === 503) {
        refused++;
        await new Promise((resolve) => setTimeout(resolve, answer.retryAfter * 1000));
      }
    }
  };
  const claims = phase === 'waiting' ? Array.from({ length: claimers }, (_, index) => claimer(index)) : [];
  // Let the claims settle into waiting (or into their Retry-After) before measuring.
  if (phase === 'waiting') await new Promise((resolve) => setTimeout(resolve, 3000));
  const probe = probeLivez(service.origin, PROBE_EVERY_MS);
  const result = await client.run({
    url: `${service.origin}/v1/pets`, method: 'POST', headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Tenant A', categoryId: 1 }), connections: CONNECTIONS, seconds,
  });
  const livez = await probe.stop();
  const inFlight = waiting;
  const refusedDuring = refused;
  const failedDuring = failed;
  stopClaims.abort();
  await Promise.all(claims);
  if (result.non2xx > 0 || result.errors > 0) console.log(`  note: ${phase}: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
  return { creationsPerSecond: result.requestsPerSecond, livezP50Ms: median(livez), claimsOutstanding: inFlight, refused: refusedDuring, failed: failedDuring };
};

try {
  for (const key of KEYS) {
    const created = await fetch(`${service.origin}/v1/consumer-groups/waiting`, {
      method: 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ start: 'end', types: [WAITED_TYPE] }),
    });
    if (created.status !== 201) throw new Error(`group for ${key}: ${created.status} ${await created.text()}`);
  }
  console.log(`waiting claims: ${claimers} claimers of ${KEYS.length} keys from ${ADDRESSES.length} addresses, key A creating on ${CONNECTIONS} connections, ${seconds} s a phase, ${rounds} rounds`);
  await measure('alone'); // warm-up
  const ratios: number[] = [];
  const livez: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['alone', 'waiting'] as const) : (['waiting', 'alone'] as const);
    const figures: Record<string, Awaited<ReturnType<typeof measure>>> = {};
    for (const phase of order) figures[phase] = await measure(phase);
    for (const phase of ['alone', 'waiting']) {
      const { creationsPerSecond, livezP50Ms, claimsOutstanding, refused, failed } = figures[phase]!;
      console.log(`  round ${round + 1} ${phase.padEnd(7)}: A ${creationsPerSecond.toFixed(0)} creations/s, /livez p50 ${livezP50Ms.toFixed(1)} ms${phase === 'waiting' ? `, ${claimsOutstanding} claims open at its end, ${refused} refused (429 or 503) and ${failed} failed to connect in all` : ''}`);
    }
    ratios.push(figures.waiting!.creationsPerSecond / figures.alone!.creationsPerSecond);
    livez.push(figures.waiting!.livezP50Ms);
  }
  console.log(`median over ${rounds} rounds: A's creations with the claims waiting ${median(ratios).toFixed(2)}x alone (goal ≥ ${CREATION_RATIO_GOAL}x), /livez p50 ${median(livez).toFixed(1)} ms (goal ≤ ${LIVEZ_P50_GOAL_MS} ms)`);
} finally {
  client.stop();
  await stop(service);
  rmSync(directory, { recursive: true, force: true });
}
