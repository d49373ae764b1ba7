import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { runPetstore } from '../support/cli.ts';
import { checkErrorShape } from '../support/error-shape.ts';
import { checkLedger } from '../support/ledger-check.ts';
import { createLedger, createPetOperation, drive } from '../support/pet-workload.ts';
import type { Operation } from '../support/pet-workload.ts';
import { seededRandom, seedFrom } from '../support/seeded-random.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';

/**
 * `npm run test:faults`: the service on a SQLite file under write load from 16 clients while Debian's
 * libfiu makes the I/O SQLite does fail at random (pwrite, pread and fsync answer an error such as
 * EIO or ENOSPC; fiu-run preloads the interposer, fiu-ctrl switches it on and off in the running
 * process). Every answer must be a 201, a 200, or a 503 with the Error body and Retry-After; once the
 * faults stop, writes must succeed without a restart; then every acknowledged write must be stored
 * and `projection verify` clean. FAULTS_SEED replays the data (not the interleaving), FAULTS_SECONDS
 * the length of the faulty phase, FAULTS_PROBABILITY the chance of each call failing.
 */

const KEY = 'faults-test-key-0123456789abcdef';
const SEED = seedFrom('FAULTS_SEED');
const FAULTY_MS = 1000 * Number(process.env.FAULTS_SECONDS ?? 20);
const PROBABILITY = Number(process.env.FAULTS_PROBABILITY ?? 0.01);
// The calls SQLite's unix VFS makes for the database, its WAL and their durability. Others (socket
// writes, the log on stdout) go through write/read/send and stay unharmed.
const FAULT_POINTS = ['posix/io/rw/pwrite', 'posix/io/rw/pread', 'posix/io/sync/fsync', 'posix/io/sync/fdatasync'];
const AFTER_FAULTS_WRITES = 300;

function requireFiu(): void {
  const found = spawnSync('sh', ['-c', 'command -v fiu-run && command -v fiu-ctrl'], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error('fiu-run and fiu-ctrl are missing: run `npm run test:faults`, which installs Debian\'s fiu-utils');
}

function fiuControl(pid: number, command: 'enable_random' | 'disable'): void {
  for (const name of FAULT_POINTS) {
    const parameters = command === 'enable_random' ? `name=${name},probability=${PROBABILITY}` : `name=${name}`;
    execFileSync('fiu-ctrl', ['-c', `${command} ${parameters}`, String(pid)]);
  }
}

/** A page of the listing: 200, or 503 with the Error body while a read fails. */
function listOperation(counts: { listed: number; unavailable: number }): Operation {
  return {
    name: 'list',
    weight: 0.5,
    async run(context) {
      const response = await fetch(`${context.baseUrl}/pets?limit=20`, { headers: { authorization: `Bearer ${context.key}` } });
      const text = await response.text();
      if (response.status === 200) counts.listed += 1;
      else if (response.status === 503) {
        counts.unavailable += 1;
        try {
          checkErrorShape(response.headers.get('content-type') ?? '', text, 503);
        } catch (error) {
          context.ledger.problems.push(`listing answered 503: ${(error as Error).message}`);
        }
      } else context.ledger.problems.push(`listing answered ${response.status}: ${text}`);
      return 'answered';
    },
  };
}

describe('storage faults under load', () => {
  it('answers 2xx or 503 while SQLite\'s I/O fails at random, writes again once it stops, and loses no acknowledged write', async (t) => {
    requireFiu();
    t.diagnostic(`seed ${SEED} (replay with FAULTS_SEED=${SEED}); ${FAULT_POINTS.join(', ')} fail with probability ${PROBABILITY} for ${FAULTY_MS / 1000} s`);
    const random = seededRandom(SEED);
    const directory = temporaryDirectory('faults');
    const database = directory.file('petstore.db');
    const environment = { PETSTORE_DATABASE: database, PETSTORE_API_KEYS: KEY, PETSTORE_LOG_LEVEL: 'warn' };
    const ledger = createLedger();
    const unavailable = { count: 0 };
    const reads = { listed: 0, unavailable: 0 };
    const service = startServiceProcess(environment, { wrapper: ['fiu-run', '-x'] });
    try {
      const baseUrl = await service.listening;
      const pid = service.child.pid!;

      // The faulty phase: every create either acknowledged or refused with a 503.
      fiuControl(pid, 'enable_random');
      let stopped = false;
      const timer = setTimeout(() => (stopped = true), FAULTY_MS);
      await drive({
        targets: [baseUrl], clients: 16, key: KEY, operations: [createPetOperation, listOperation(reads)], ledger, random, round: 'f',
        stopped: () => stopped, unavailable,
      });
      clearTimeout(timer);
      fiuControl(pid, 'disable');
      const acknowledgedDuringFaults = ledger.acknowledged.size;

      // The faults are gone: the same process writes again, every create acknowledged.
      const before = ledger.acknowledged.size;
      let writes = 0;
      await drive({
        targets: [baseUrl], clients: 8, key: KEY, operations: [createPetOperation], ledger, random, round: 'a',
        stopped: () => writes++ >= AFTER_FAULTS_WRITES,
      });
      const ready = await fetch(new URL('/readyz', baseUrl));
      assert.equal(ready.status, 200, `not ready after the faults stopped: ${await ready.text()}`);
      assert.deepEqual(ledger.problems, [], 'every answer a 2xx or a 503 with the Error body, none after the faults stopped');
      assert.ok(ledger.acknowledged.size - before >= AFTER_FAULTS_WRITES, `only ${ledger.acknowledged.size - before} writes acknowledged after the faults stopped`);
      assert.ok(unavailable.count + reads.unavailable > 0, 'no fault reached a client: the injection did nothing');

      service.signal('SIGTERM');
      const exit = await service.exited;
      assert.equal(exit.code, 0, `the service did not stop cleanly: ${service.stderr()}`);
      const log = service.stdout();
      t.diagnostic(`service log: ${log.split('\n').filter(Boolean).length} lines, ${log.length} bytes`);

      // Every acknowledged write is there, with the service restarted on the file, and the read model matches the log.
      const again = startServiceProcess(environment);
      const store = await openSqlitePetStore(database);
      let report;
      try {
        report = await checkLedger(ledger, { baseUrl: await again.listening, key: KEY, db: store.db });
      } finally {
        await store.close();
        again.signal('SIGTERM');
        await again.exited;
        again.cleanup();
      }
      const verify = await runPetstore(['projection', 'verify'], environment);
      assert.equal(verify.code, 0, `petstore projection verify failed:\n${verify.stdout}${verify.stderr}`);
      assert.deepEqual(report.problems, []);
      const summary = `injected I/O faults reached ${unavailable.count + reads.unavailable} requests, each answered 503 ` +
        `(${unavailable.count} creates, ${reads.unavailable} listings); ${acknowledgedDuringFaults} creates acknowledged during the faults, ` +
        `${ledger.acknowledged.size - acknowledgedDuringFaults} after; ${report.acknowledgedChecked} acknowledged writes checked present, ` +
        `${report.unansweredStored} of the refused ones stored all the same; ${reads.listed} listings answered; projection verify: clean`;
      t.diagnostic(summary);
      process.stdout.write(`${summary}\n`);
    } finally {
      service.cleanup();
      directory.remove();
    }
  });
});
