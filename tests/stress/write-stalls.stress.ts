import { describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { APPEND_LOCK } from '../../adapters/store/postgres/postgres-sql-dialect.ts';
import { BUSY_TIMEOUT_MS } from '../../adapters/store/sqlite/open-sqlite.ts';
import { openSqliteConnection } from '../../adapters/store/sqlite/sqlite-driver.ts';
import { findPostgresBin, startPostgresCluster } from '../../scripts/postgres-cluster.ts';
import type { PostgresCluster } from '../../scripts/postgres-cluster.ts';
import { startServiceProcess } from '../support/service-process.ts';
import type { ServiceProcess } from '../support/service-process.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * `npm run test:faults`, the stalls: the service (a real process) under writers while its database
 * stalls, the SQLite write lock held by another process (HOLD_MS, 20 s) with webhook subscriptions
 * delivering, and the PostgreSQL backend holding the append lock stopped (STALL_MS, 12 s). Every write
 * must be answered within the statement timeout plus a second: 503 with Retry-After while the fault
 * lasts, 201 within seconds after it; `/readyz` within a second, not ready while writes cannot commit.
 */

const KEY = 'stalls-test-key-0123456789abcdef';
const HOLD_MS = Number(process.env.HOLD_MS ?? 20_000);
const STALL_MS = Number(process.env.STALL_MS ?? 12_000);
const STATEMENT_TIMEOUT_MS = 5000;
const SLACK_MS = 1000;
/** Readiness may still say ready this long into a fault: until a group has waited a second. */
const READINESS_NOTICES_MS = 2000;
/** Writes sent this long after the fault ended must all commit. */
const RECOVERS_MS = 2000;

interface Answer {
  readonly sent: number;
  readonly answered: number;
  readonly status: number;
  readonly retryAfter: string | null;
  readonly id?: number;
}

/** Writers creating pets one after another, and a readiness probe, until `stop`; every answer timed. */
function load(baseUrl: string, writers: number) {
  const writes: Answer[] = [];
  const probes: Answer[] = [];
  let running = true;
  const origin = new URL(baseUrl).origin;
  const writer = async (index: number) => {
    for (let n = 0; running; n++) {
      const sent = performance.now();
      const response = await fetch(`${baseUrl}/pets`, {
        method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `w${index}-${n}`, categoryId: 1 }),
      });
      const body = (await response.json()) as { id?: number };
      writes.push({ sent, answered: performance.now(), status: response.status, retryAfter: response.headers.get('retry-after'), ...(response.status === 201 ? { id: body.id! } : {}) });
      if (response.status !== 201) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const prober = async () => {
    while (running) {
      const sent = performance.now();
      const response = await fetch(`${origin}/readyz`);
      await response.arrayBuffer();
      probes.push({ sent, answered: performance.now(), status: response.status, retryAfter: response.headers.get('retry-after') });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const done = Promise.all([...Array.from({ length: writers }, (_, index) => writer(index)), prober()]);
  return {
    writes, probes,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Checks the answers against the promise, `fault` being when the fault began and ended; returns a summary. */
async function checkAnswers(t: TestContext, baseUrl: string, what: string, answers: ReturnType<typeof load>, fault: { from: number; to: number }): Promise<string> {
  const { writes, probes } = answers;
  const waited = (answer: Answer) => answer.answered - answer.sent;
  const during = writes.filter((write) => write.sent >= fault.from + 100 && write.answered <= fault.to);
  const longest = Math.max(...writes.map(waited));
  const longestDuring = Math.max(0, ...during.map(waited));
  const longestProbe = Math.max(...probes.map(waited));
  const refused = writes.filter((write) => write.status === 503);
  assert.ok(refused.length > 0, 'writes met the fault');
  for (const write of writes) {
    assert.ok(write.status === 201 || write.status === 503, `a write answered ${write.status}`);
    if (write.status === 503) assert.match(write.retryAfter ?? '', /^\d+$/, 'Retry-After on a 503');
  }
  assert.deepEqual(during.filter((write) => write.status !== 503).map((write) => [write.status, Math.round(waited(write))]), [], 'every write during the fault answered 503');
  assert.ok(longest < STATEMENT_TIMEOUT_MS + SLACK_MS, `a write waited ${Math.round(longest)} ms`);
  const afterFault = writes.filter((write) => write.sent >= fault.to + RECOVERS_MS);
  assert.ok(afterFault.length > 0 && afterFault.every((write) => write.status === 201), 'writes commit again within seconds of the fault');
  assert.ok(longestProbe < 1000, `readiness answered in ${Math.round(longestProbe)} ms`);
  const probesDuring = probes.filter((probe) => probe.sent >= fault.from + READINESS_NOTICES_MS && probe.answered <= fault.to);
  assert.ok(probesDuring.length > 0 && probesDuring.every((probe) => probe.status === 503), `not ready during the fault: ${probesDuring.map((probe) => probe.status).join(' ')}`);
  // Nothing acknowledged is lost.
  const acknowledged = writes.filter((write) => write.id !== undefined);
  for (const write of acknowledged) {
    const response = await fetch(`${baseUrl}/pets/${write.id}`, { headers: { authorization: `Bearer ${KEY}` } });
    await response.arrayBuffer();
    assert.equal(response.status, 200, `acknowledged pet ${write.id} is there`);
  }
  const firstAfter = writes.find((write) => write.sent >= fault.to && write.status === 201);
  const summary = `${what}: ${writes.length} writes, ${refused.length} answered 503; longest wait ${Math.round(longest)} ms (during the fault ${Math.round(longestDuring)} ms); ` +
    `first 201 ${firstAfter ? Math.round(firstAfter.answered - fault.to) : '-'} ms after it ended; /readyz ${probes.length} probes, longest ${Math.round(longestProbe)} ms, ` +
    `${probesDuring.length} during the fault, all 503; ${acknowledged.length} acknowledged writes all present`;
  t.diagnostic(summary);
  process.stdout.write(`${summary}\n`);
  return summary;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the service while its database stalls', () => {
  it(`answers every write within ${BUSY_TIMEOUT_MS / 1000} s + 1 s while another process holds the SQLite write lock, webhooks delivering`, async (t) => {
    const directory = temporaryDirectory('held-lock');
    const receiver = await startWebhookReceiver();
    let service: ServiceProcess | undefined;
    try {
      const file = directory.file('petstore.db');
      service = startServiceProcess({ PETSTORE_DATABASE: file, PETSTORE_API_KEYS: KEY, PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true' });
      const baseUrl = await service.listening;
      for (let n = 0; n < 10; n++) {
        const response = await fetch(`${baseUrl}/webhooks`, {
          method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url }),
        });
        assert.equal(response.status, 201, await response.text());
      }
      const answers = load(baseUrl, 16);
      await sleep(2000);
      const other = await openSqliteConnection(file);
      const from = performance.now();
      other.exec('BEGIN IMMEDIATE');
      await sleep(HOLD_MS);
      other.exec('COMMIT');
      const to = performance.now();
      other.close();
      await sleep(RECOVERS_MS + 3000);
      await answers.stop();
      await checkAnswers(t, baseUrl, `SQLite write lock held by another process for ${HOLD_MS / 1000} s, 16 writers, 10 subscriptions`, answers, { from, to });
      assert.equal(service.child.exitCode, null, 'the service lives');
    } finally {
      service?.cleanup();
      await receiver.close();
      directory.remove();
    }
  });

  it(`answers every write within the statement timeout + 1 s while the PostgreSQL backend holding the append lock is stopped`, async (t) => {
    const bin = findPostgresBin();
    if (!bin) throw new Error('this test needs PostgreSQL binaries in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)');
    let cluster: PostgresCluster | undefined;
    let service: ServiceProcess | undefined;
    /** The stopped backend's pid, until it is let run again. */
    let stopped: number | undefined;
    const observer = { client: undefined as pg.Client | undefined };
    try {
      cluster = await startPostgresCluster(bin);
      service = startServiceProcess({ PETSTORE_DATABASE: cluster.url, PETSTORE_API_KEYS: KEY, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
      const baseUrl = await service.listening;
      observer.client = new pg.Client({ connectionString: cluster.url });
      await observer.client.connect();
      // A look at pg_locks never waits long on a stopped backend.
      await observer.client.query('set statement_timeout = 2000');
      const answers = load(baseUrl, 8);
      await sleep(2000);
      // The append lock's key as pg_locks shows a bigint key: its low 32 bits in objid, objsubid 1.
      const holder = async () => {
        const { rows } = await observer.client!.query<{ pid: number }>("select pid from pg_locks where locktype = 'advisory' and granted and objid = $1 and objsubid = 1", [APPEND_LOCK]);
        return rows[0]?.pid;
      };
      // The holder seen may release the lock before the signal lands: stop it, then make sure it still holds it.
      let pid: number | undefined;
      while (pid === undefined) {
        const seen = await holder();
        if (seen === undefined) continue;
        process.kill(seen, 'SIGSTOP');
        stopped = seen;
        if ((await holder()) === seen) pid = seen;
        else {
          process.kill(seen, 'SIGCONT');
          stopped = undefined;
        }
      }
      const from = performance.now();
      await sleep(STALL_MS);
      stopped = undefined;
      process.kill(pid, 'SIGCONT');
      const to = performance.now();
      await sleep(RECOVERS_MS + 3000);
      await answers.stop();
      await checkAnswers(t, baseUrl, `PostgreSQL backend holding the append lock stopped for ${STALL_MS / 1000} s, 8 writers`, answers, { from, to });
      assert.equal(service.child.exitCode, null, 'the service lives');
    } finally {
      if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
      await observer.client?.end();
      service?.cleanup();
      await cluster?.destroy();
    }
  });
});
