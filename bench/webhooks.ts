// Webhook delivery's figures, the service as `npm start` runs it in a process of its own over a fresh
// SQLite file, delivering to one fast receiver on loopback (204 at once, no signature check):
// - backlog: events/s delivered to a receiver that was refusing while N pets were written and then
//   answers (one subscription; each position stored before the next request), one event per request
//   and in batches of up to 100 (`batchSize`);
// - live: creations at about 200 a second, each timed from its 201 to its event reaching the receiver (p50, p99).
// Goals (bench/goals.ts, judged in bench/report.ts): backlog ≥ 5,000 events/s; live p99 ≤ 50 ms. Part of `npm run bench`, or alone:
//   npm run bench:webhooks [-- <events>]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listeningBase, npmStartNodeArgs } from '../scripts/start-command.ts';
import { count, WEBHOOK_EVENTS_PER_SECOND, WEBHOOK_P99_MS } from './goals.ts';

const KEY = 'bench-webhooks-key-0123456789';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

export interface WebhookFigures {
  readonly backlogEvents: number;
  readonly batchSize: number;
  readonly backlogEventsPerSecond: number;
  readonly liveWrites: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface WebhookBenchOptions {
  /** Pets written while the receiver refuses, then delivered as a backlog. */
  readonly events: number;
  /** Creations timed from their 201 to their delivery. */
  readonly liveWrites: number;
  readonly log: (line: string) => void;
}

/** One event at a time, then in batches of up to 100: a fresh service for each. */
export async function runWebhookBench({ events, liveWrites, log }: WebhookBenchOptions): Promise<WebhookFigures[]> {
  const figures: WebhookFigures[] = [];
  for (const batchSize of [1, 100]) figures.push(await runWebhooks(events, liveWrites, batchSize, log));
  return figures;
}

export async function runWebhooks(events: number, liveWrites: number, batchSize: number, log: (line: string) => void): Promise<WebhookFigures> {
  let refusing = true;
  let received = 0;
  const arrivals = new Map<number, number>();
  let onArrival: () => void = () => {};
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (refusing) {
        response.writeHead(503).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { id: number } } | { data: { id: number } }[];
      const now = performance.now();
      for (const event of Array.isArray(body) ? body : [body]) {
        received++;
        arrivals.set(event.data.id, now);
      }
      response.writeHead(204).end();
      onArrival();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-webhooks-'));
  const child = spawn(process.execPath, npmStartNodeArgs(), {
    env: {
      PATH: process.env.PATH ?? '', PORT: '0', PETSTORE_LOG_LEVEL: 'silent', PETSTORE_DATABASE: join(directory, 'petstore.db'), PETSTORE_API_KEYS: KEY,
      PETSTORE_RATE_LIMIT: 'off', PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true', PETSTORE_WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 30 }, (_, index) => `${Math.min(20, 5 * 2 ** index)}ms`).join(','),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const base = await listeningBase(child);
    const created = await fetch(`${base}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiverUrl, batchSize }) });
    if (created.status !== 201) throw new Error(`POST /webhooks answered ${created.status}: ${await created.text()}`);

    // Backlog: written while the receiver refuses, then delivered as fast as it goes.
    const writers = 8;
    let next = 0;
    await Promise.all(Array.from({ length: writers }, async () => {
      while (next < events) {
        next++;
        const response = await fetch(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench', categoryId: 1 }) });
        if (response.status !== 201) throw new Error(`POST /pets answered ${response.status}`);
        await response.arrayBuffer();
      }
    }));
    const started = performance.now();
    refusing = false;
    // Its retries may have run out while the backlog was written (it then waits to be resumed, as an operator would).
    const subscription = (await created.json()) as { id: string };
    const state = (await (await fetch(`${base}/webhooks/${subscription.id}`, { headers })).json()) as { status: string };
    if (state.status === 'failing') {
      const resumed = await fetch(`${base}/webhooks/${subscription.id}/resume`, { method: 'POST', headers });
      if (!resumed.ok) throw new Error(`POST /webhooks/${subscription.id}/resume answered ${resumed.status}: ${await resumed.text()}`);
    }
    await new Promise<void>((resolve) => {
      onArrival = () => received >= events && resolve();
      onArrival();
    });
    const seconds = (performance.now() - started) / 1000;
    const backlogEventsPerSecond = Math.round(events / seconds);
    log(`webhooks backlog, batchSize ${batchSize}: ${events} events in ${seconds.toFixed(2)} s = ${backlogEventsPerSecond} events/s (goal ≥ ${count(WEBHOOK_EVENTS_PER_SECOND)})`);

    // Live: one creation every 5 ms, each timed from its 201 to its arrival.
    const latencies: number[] = [];
    const pending: Promise<void>[] = [];
    for (let index = 0; index < liveWrites; index++) {
      pending.push((async () => {
        const response = await fetch(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'live', categoryId: 1 }) });
        const answered = performance.now();
        const { id } = (await response.json()) as { id: number };
        while (!arrivals.has(id)) await new Promise((resolve) => setTimeout(resolve, 1));
        latencies.push(Math.max(0, arrivals.get(id)! - answered));
      })());
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(pending);
    latencies.sort((a, b) => a - b);
    const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))]!;
    log(`webhooks live, batchSize ${batchSize}: ${liveWrites} creations, 201 to delivery p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms (goal p99 ≤ ${WEBHOOK_P99_MS} ms)`);
    return { backlogEvents: events, batchSize, backlogEventsPerSecond, liveWrites, p50Ms: at(0.5), p99Ms: at(0.99) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    receiver.closeAllConnections();
    receiver.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('webhooks.ts')) {
  await runWebhookBench({ events: Number(process.argv[2] ?? 5_000), liveWrites: 1_000, log: (line) => console.log(line) });
}
