import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { MIXED_LOAD } from '../support/mixed-operations.ts';
import { createLedger, drive } from '../support/pet-workload.ts';
import type { Operation } from '../support/pet-workload.ts';
import { seededRandom, seedFrom } from '../support/seeded-random.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';

/**
 * `npm run test:soak` (not in CI): steady mixed load on the service for SOAK_SECONDS (180 unless
 * given), sampling its resident memory and open file descriptors from /proc (Linux) every few
 * seconds. Memory must level off after the warm-up, and once the load stops the descriptors
 * (sockets, database files) must fall back to where they started.
 */

const KEY = 'soak-test-key-0123456789abcdef';
const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const CLIENTS = 32;
const SAMPLE_EVERY_MS = 5000;
const KEEP_ALIVE_MS = 1000;

interface Sample {
  readonly seconds: number;
  readonly rssMb: number;
  readonly fds: number;
  readonly requests: number;
}

function residentMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) / 1024;
}

function openDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

describe('soak', () => {
  it(`keeps memory and open descriptors bounded under ${SECONDS} s of mixed load`, async (t) => {
    const seed = seedFrom('SOAK_SEED');
    const random = seededRandom(seed);
    const directory = temporaryDirectory('soak');
    const service = startServiceProcess({ PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY, PETSTORE_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS) });
    try {
      const baseUrl = await service.listening;
      const pid = service.child.pid!;
      const idleFds = openDescriptors(pid);
      const ledger = createLedger();
      let requests = 0;
      const counted = MIXED_LOAD.map((operation): Operation => ({
        ...operation,
        run(context) {
          requests++;
          return operation.run(context);
        },
      }));

      const started = performance.now();
      const samples: Sample[] = [];
      const sample = () => samples.push({ seconds: Math.round((performance.now() - started) / 1000), rssMb: residentMb(pid), fds: openDescriptors(pid), requests });
      sample();
      const sampler = setInterval(sample, SAMPLE_EVERY_MS);
      await drive({
        targets: [baseUrl], clients: CLIENTS, key: KEY, operations: counted, ledger, random, round: 'soak',
        stopped: () => performance.now() - started > SECONDS * 1000,
      });
      clearInterval(sampler);
      sample();

      // Kept-alive client connections close after KEEP_ALIVE_MS; then the descriptors should be back where they were.
      let settledFds = openDescriptors(pid);
      for (let waited = 0; settledFds > idleFds + 2 && waited < 10 * KEEP_ALIVE_MS; waited += 250) {
        await delay(250);
        settledFds = openDescriptors(pid);
      }

      const table = samples.map((row) => `${String(row.seconds).padStart(4)} s  ${String(row.requests).padStart(7)} requests  ${row.rssMb.toFixed(1).padStart(6)} MB  ${String(row.fds).padStart(4)} fds`);
      t.diagnostic(`seed ${seed}; ${requests} requests, ${(requests / SECONDS).toFixed(0)}/s, ${ledger.acknowledged.size} pets created\n${table.join('\n')}\nfds idle before: ${idleFds}, after the load: ${settledFds}`);

      assert.deepEqual(ledger.problems, []);
      // After the first third (warm-up: JIT, heap and SQLite page cache growing to size), memory levels off.
      const steady = samples.filter((row) => row.seconds >= SECONDS / 3);
      const half = Math.floor(steady.length / 2);
      const earlier = Math.max(...steady.slice(0, half).map((row) => row.rssMb));
      const later = Math.max(...steady.slice(half).map((row) => row.rssMb));
      assert.ok(later <= earlier * 1.15 + 10, `RSS kept growing: at most ${earlier.toFixed(1)} MB, then ${later.toFixed(1)} MB`);
      assert.ok(settledFds <= idleFds + 2, `open descriptors went from ${idleFds} to ${settledFds} and stayed there`);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      directory.remove();
    }
  });
});
