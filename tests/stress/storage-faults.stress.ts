import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { runPetstore } from '../support/cli.ts';
import { checkErrorShape } from '../support/error-shape.ts';
import { checkLedger } from '../support/ledger-check.ts';
import { createLedger, createPetOperation, drive } from '../support/pet-workload.ts';
import type { Operation, PetLedger } from '../support/pet-workload.ts';
import type { LedgerReport } from '../support/ledger-check.ts';
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
const TMPFS_MB = 16;
const FULL_MS = 5000;

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

/** With the service stopped: every acknowledged write is served by a restarted service and stored, and `projection verify` is clean. */
async function checkAfterRestart(environment: Record<string, string>, ledger: PetLedger): Promise<LedgerReport> {
  const again = startServiceProcess(environment);
  const store = await openSqlitePetStore(environment.PETSTORE_DATABASE!);
  let report: LedgerReport;
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
  return report;
}

/** Creates from 8 clients until `count` have been sent; all must be acknowledged (no fault tolerated). */
async function writesSucceed(baseUrl: string, ledger: PetLedger, random: () => number, round: string, count: number): Promise<void> {
  const before = ledger.acknowledged.size;
  let sent = 0;
  await drive({ targets: [baseUrl], clients: 8, key: KEY, operations: [createPetOperation], ledger, random, round, stopped: () => sent++ >= count });
  const ready = await fetch(new URL('/readyz', baseUrl));
  assert.equal(ready.status, 200, `not ready after the fault ended: ${await ready.text()}`);
  assert.deepEqual(ledger.problems, [], 'every answer a 2xx or a 503 with the Error body, none after the fault ended');
  assert.ok(ledger.acknowledged.size - before >= count, `only ${ledger.acknowledged.size - before} writes acknowledged after the fault ended`);
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
      await writesSucceed(baseUrl, ledger, random, 'a', AFTER_FAULTS_WRITES);
      assert.ok(unavailable.count + reads.unavailable > 0, 'no fault reached a client: the injection did nothing');

      service.signal('SIGTERM');
      const exit = await service.exited;
      assert.equal(exit.code, 0, `the service did not stop cleanly: ${service.stderr()}`);
      const log = service.stdout();
      t.diagnostic(`service log: ${log.split('\n').filter(Boolean).length} lines, ${log.length} bytes`);
      const report = await checkAfterRestart(environment, ledger);
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

  it('answers 2xx or 503 while the database\'s filesystem is full (a small tmpfs), writes again once space returns, and loses no acknowledged write', async (t) => {
    if (process.getuid?.() !== 0) throw new Error('filling a filesystem needs a tmpfs of its own: run as root (mount -t tmpfs)');
    const random = seededRandom(SEED + 1);
    const directory = temporaryDirectory('full');
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'petstore-full', directory.path]);
    const database = directory.file('petstore.db');
    const filler = directory.file('filler');
    const environment = { PETSTORE_DATABASE: database, PETSTORE_API_KEYS: KEY, PETSTORE_LOG_LEVEL: 'warn' };
    const ledger = createLedger();
    const unavailable = { count: 0 };
    const service = startServiceProcess(environment);
    try {
      const baseUrl = await service.listening;
      await writesSucceed(baseUrl, ledger, random, 'b', 200);
      const filled = fillUp(filler);
      let stopped = false;
      const timer = setTimeout(() => (stopped = true), FULL_MS);
      await drive({ targets: [baseUrl], clients: 16, key: KEY, operations: [createPetOperation], ledger, random, round: 'full', stopped: () => stopped, unavailable });
      clearTimeout(timer);
      const acknowledgedWhileFull = ledger.acknowledged.size - 200;
      assert.ok(unavailable.count > 0, 'no write met the full disk');
      const notReady = await fetch(new URL('/readyz', baseUrl));
      const reason = await notReady.text();
      assert.equal(notReady.status, 503, `ready with a full disk: ${reason}`);

      rmSync(filler);
      await writesSucceed(baseUrl, ledger, random, 'c', 200);
      service.signal('SIGTERM');
      assert.equal((await service.exited).code, 0, `the service did not stop cleanly: ${service.stderr()}`);
      const report = await checkAfterRestart(environment, ledger);
      const summary = `a full ${TMPFS_MB} MB tmpfs (filled with ${filled} bytes) refused ${unavailable.count} creates with 503 and acknowledged ${acknowledgedWhileFull} ` +
        `(pages free in the file and its log); /readyz said ${reason}; ${report.acknowledgedChecked} acknowledged writes checked present after space returned; projection verify: clean`;
      t.diagnostic(summary);
      process.stdout.write(`${summary}\n`);
    } finally {
      service.cleanup();
      execFileSync('umount', [directory.path]);
      directory.remove();
    }
  });
});

/** Writes `file` until the filesystem is full; returns how many bytes it took. */
function fillUp(file: string): number {
  const chunk = Buffer.alloc(64 * 1024, 1);
  const fd = openSync(file, 'w');
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return written;
}
