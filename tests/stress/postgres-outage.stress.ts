import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openPostgresPetStore } from '../../adapters/store/postgres/postgres-pet-store.ts';
import { findPostgresBin, startPostgresCluster } from '../../scripts/postgres-cluster.ts';
import type { PostgresCluster } from '../../scripts/postgres-cluster.ts';
import { checkLedger } from '../support/ledger-check.ts';
import { openEventStream } from '../support/event-stream-reader.ts';
import { createLedger, createPetOperation, drive } from '../support/pet-workload.ts';
import type { PetLedger } from '../support/pet-workload.ts';
import { seededRandom, seedFrom } from '../support/seeded-random.ts';
import { startServiceProcess } from '../support/service-process.ts';
import type { ServiceProcess } from '../support/service-process.ts';

/**
 * `npm run test:faults`, PostgreSQL's part: the service (a real process, as `npm start` runs it) on a
 * durable cluster of its own, 8 clients creating pets and an event stream open, while PostgreSQL is
 * stopped at once (`pg_ctl stop -m immediate`, as a crash would) and started again. The process must
 * live through it, answer only 201 or 503 with the Error body and Retry-After, write again once the
 * server is back without a restart, keep every acknowledged write, and log the outage in short lines.
 * FAULTS_SEED replays the data; OUTAGE_MS is how long PostgreSQL stays down.
 */

const KEY = 'faults-test-key-0123456789abcdef';
const SEED = seedFrom('FAULTS_SEED');
const LOAD_BEFORE_MS = 2000;
const OUTAGE_MS = Number(process.env.OUTAGE_MS ?? 4000);
const AFTER_WRITES = 300;
/** Room for a line with a stack; a pg client object dumped into a line makes it 4 KB or more. */
const LONGEST_LOG_LINE = 3000;

/** Drives creates from 8 clients until `stopped()`; resolves once every client ended (a lost connection ends one). */
function createFrom8(baseUrl: string, ledger: PetLedger, random: () => number, round: string, stopped: () => boolean, unavailable: { count: number }) {
  return drive({ targets: [baseUrl], clients: 8, key: KEY, operations: [createPetOperation], ledger, random, round, stopped, unavailable });
}

const alive = (service: ServiceProcess) => service.child.exitCode === null && service.child.signalCode === null;

describe('PostgreSQL lost under write load', () => {
  it('answers 201 or 503 while PostgreSQL is stopped at once, writes again once it returns, and loses no acknowledged write', async (t) => {
    const bin = findPostgresBin();
    if (!bin) throw new Error('this test needs PostgreSQL binaries in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)');
    const random = seededRandom(SEED);
    t.diagnostic(`seed ${SEED} (replay with FAULTS_SEED=${SEED}); PostgreSQL down for ${OUTAGE_MS / 1000} s`);
    // Durable: an immediate stop keeps only what reached the WAL on disk, as in production.
    let cluster: PostgresCluster | undefined;
    let service: ServiceProcess | undefined;
    try {
      cluster = await startPostgresCluster(bin, { durable: true });
      const environment = {
        PETSTORE_DATABASE: cluster.url, PETSTORE_API_KEYS: KEY, PETSTORE_LOG_LEVEL: 'warn', PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: '2000',
      };
      service = startServiceProcess(environment);
      const baseUrl = await service.listening;
      const stream = await openEventStream(`${baseUrl}/events`, { authorization: `Bearer ${KEY}` });
      assert.equal(stream.response.status, 200);
      let streamed = 0;
      const reading = (async () => {
        for (;;) {
          await stream.nextEvent();
          streamed++;
        }
      })().catch(() => {}); // the stream may end when the database goes: what matters is that the process does not

      const ledger = createLedger();
      const unavailable = { count: 0 };
      let writing = true;
      const load = createFrom8(baseUrl, ledger, random, 'o', () => !writing, unavailable);

      await new Promise((resolve) => setTimeout(resolve, LOAD_BEFORE_MS));
      const acknowledgedBefore = ledger.acknowledged.size;
      assert.ok(acknowledgedBefore > 0, 'no create was acknowledged before the outage');
      await cluster.stop('immediate');
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      assert.ok(alive(service), `the service died while PostgreSQL was down: ${service.stderr().slice(-2000)}`);
      const whileDown = await fetch(`${baseUrl}/pets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: '{"name":"Down","categoryId":1}' });
      const downText = await whileDown.text();
      assert.equal(whileDown.status, 503, `a create while PostgreSQL is down: ${downText}`);
      assert.match(whileDown.headers.get('retry-after') ?? '', /^\d+$/);
      await cluster.start();
      writing = false;
      await load;
      assert.ok(unavailable.count > 0, 'no create met the outage');
      assert.ok(alive(service), `the service died when PostgreSQL returned: ${service.stderr().slice(-2000)}`);

      // Back: the same process writes again, every create acknowledged.
      const afterBefore = ledger.acknowledged.size;
      const noneUnavailable = { count: 0 };
      let sent = 0;
      await createFrom8(baseUrl, ledger, random, 'a', () => sent++ >= AFTER_WRITES, noneUnavailable);
      assert.equal(noneUnavailable.count, 0, 'creates refused after PostgreSQL returned');
      assert.ok(ledger.acknowledged.size - afterBefore >= AFTER_WRITES, `only ${ledger.acknowledged.size - afterBefore} creates acknowledged after PostgreSQL returned`);
      assert.deepEqual(ledger.problems, [], 'every answer a 201, or a 503 with the Error body and Retry-After');
      stream.close();
      await reading;

      const store = await openPostgresPetStore({ url: cluster.url, poolSize: 2, statementTimeoutMs: 0 }, { migrate: false });
      let report;
      try {
        report = await checkLedger(ledger, { baseUrl, key: KEY, db: store.db });
      } finally {
        await store.close();
      }
      assert.deepEqual(report.problems, []);
      assert.ok(alive(service), 'the service died');
      service.signal('SIGTERM');
      const exit = await service.exited;
      assert.equal(exit.code, 0, `the service did not stop cleanly: ${service.stderr().slice(-2000)}`);
      const lines = service.stdout().split('\n').filter(Boolean);
      const longest = Math.max(0, ...lines.map((line) => line.length));
      const longestLine = lines.find((line) => line.length === longest) ?? '';
      // A field of every pg Client: the client itself went into the log.
      assert.equal(lines.find((line) => line.includes('connectionParameters')), undefined);
      assert.ok(longest <= LONGEST_LOG_LINE, `a log line of ${longest} characters: ${longestLine.slice(0, 200)} … ${longestLine.slice(-300)}`);
      const summary = `PostgreSQL stopped (immediate) for ${OUTAGE_MS / 1000} s under 8 writers with an event stream open: ${acknowledgedBefore} creates acknowledged before, ` +
        `${unavailable.count} answered 503 during the outage, ${report.acknowledgedChecked} acknowledged writes checked present ` +
        `(${report.unansweredStored} unanswered ones stored all the same), ${streamed} events streamed; ${lines.length} log lines, the longest ${longest} characters`;
      t.diagnostic(summary);
      process.stdout.write(`${summary}\n`);
    } finally {
      service?.cleanup();
      await cluster?.destroy();
    }
  });
});
