import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pet } from '../../domain/index.ts';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { runPetstore } from '../support/cli.ts';
import { checkLedger } from '../support/ledger-check.ts';
import type { LedgerReport } from '../support/ledger-check.ts';
import { changeStatusOperation, createLedger, createPetOperation, drive, isConnectionLost } from '../support/pet-workload.ts';
import type { Operation, PetLedger } from '../support/pet-workload.ts';
import { seededRandom, seedFrom } from '../support/seeded-random.ts';
import { startServiceProcess } from '../support/service-process.ts';
import type { ServiceProcess } from '../support/service-process.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';

/**
 * `npm run test:crash`: the service on a SQLite file, driven by concurrent clients from this process
 * (creates, and status changes on the pets created), killed with SIGKILL at random moments and
 * restarted; then every acknowledged write must be there, nothing else, and the read model must match
 * the log, by this test's own replay and by the product's `projection verify`. CRASH_SEED replays the kill moments and data
 * (not the exact interleaving of requests); CRASH_CYCLES changes the number of kills.
 */

const KEY = 'crash-test-key-0123456789abcdef';
const CYCLES = Number(process.env.CRASH_CYCLES ?? 10);
const CLIENTS = 16;
const SEED = seedFrom('CRASH_SEED');
// Each cycle kills after a random number of acknowledged writes (so a busy machine still checks
// thousands), a random few milliseconds later, while the other clients are mid-request; or after
// MAX_LOAD_MS of load, whichever comes first, to bound the run.
const MAX_LOAD_MS = 8000;

/** Calls `kill` once, a moment after the `threshold`th acknowledgement or after MAX_LOAD_MS. */
function killSwitch(threshold: number, random: () => number, kill: () => void): { acknowledged: () => void; cancel: () => void } {
  let count = 0;
  let done = false;
  const fire = () => {
    if (done) return;
    done = true;
    kill();
  };
  const cap = setTimeout(fire, MAX_LOAD_MS);
  let soon: NodeJS.Timeout | undefined;
  return {
    acknowledged: () => {
      if (++count === threshold) soon = setTimeout(fire, random() * 50);
    },
    cancel: () => {
      clearTimeout(cap);
      clearTimeout(soon);
    },
  };
}
const OPERATIONS: readonly Operation[] = [createPetOperation, changeStatusOperation];

function environment(database: string): Record<string, string> {
  return { PETSTORE_DATABASE: database, PETSTORE_API_KEYS: KEY };
}

/**
 * Restarts the service once more and compares the ledger with what it serves and stores; then, with
 * the service stopped, runs `projection verify`.
 */
async function finalCheck(database: string, ledger: PetLedger): Promise<LedgerReport> {
  const service = startServiceProcess(environment(database));
  const store = await openSqlitePetStore(database);
  let report: LedgerReport;
  try {
    report = await checkLedger(ledger, { baseUrl: await service.listening, key: KEY, db: store.db });
  } finally {
    await store.close();
    service.child.kill('SIGTERM');
    await service.exited;
    service.cleanup();
  }
  const verify = await runPetstore(['projection', 'verify'], environment(database));
  assert.equal(verify.code, 0, `petstore projection verify failed:\n${verify.stdout}${verify.stderr}`);
  return report;
}

function describeRun(report: LedgerReport, ledger: PetLedger, kills: number): string {
  const { illegal, stale, lost } = ledger.changeCounts;
  return `${report.acknowledgedChecked} acknowledged creates and ${report.changesChecked} acknowledged status changes checked after ${kills} SIGKILLs ` +
    `(creates: ${ledger.sent.size} sent, ${ledger.unanswered.size} unanswered, of which ${report.unansweredStored} were stored; ` +
    `status changes: also ${illegal} answered 409, ${stale} answered 412, ${lost} unanswered, of which at least ${report.unansweredChangesStored} were stored; ` +
    `${report.storedPets} pets, ${report.events} events; projection verify: clean)`;
}

describe('crash safety', () => {
  it(`one process: ${CYCLES} SIGKILLs at random moments lose no acknowledged write`, async (t) => {
    t.diagnostic(`seed ${SEED} (replay with CRASH_SEED=${SEED})`);
    const random = seededRandom(SEED);
    const directory = temporaryDirectory('crash');
    const database = directory.file('petstore.db');
    const ledger = createLedger();
    let service: ServiceProcess | undefined;
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        service = startServiceProcess(environment(database));
        const baseUrl = await service.listening;
        const running = service;
        let stopped = false;
        const killer = killSwitch(100 + Math.floor(random() * 900), random, () => running.child.kill('SIGKILL'));
        const driving = drive({
          targets: [baseUrl], clients: CLIENTS, key: KEY, operations: OPERATIONS, ledger, random, round: `c${cycle}`,
          stopped: () => stopped, onAcknowledged: async () => killer.acknowledged(),
        });
        const exit = await running.exited;
        running.cleanup();
        killer.cancel();
        stopped = true;
        await driving;
        assert.equal(exit.signal, 'SIGKILL', `cycle ${cycle}: the service ended by itself: ${running.stderr()}`);
      }
      service = undefined;
      const report = await finalCheck(database, ledger);
      t.diagnostic(describeRun(report, ledger, CYCLES));
      assert.deepEqual(report.problems, []);
      assert.ok(report.acknowledgedChecked >= CYCLES, `only ${report.acknowledgedChecked} creates were acknowledged`);
      assert.ok(report.changesChecked > 0, 'no status change was acknowledged');
    } finally {
      service?.cleanup();
      directory.remove();
    }
  });

  it('two processes on one file: no busy error reaches a client, each reads the other\'s writes at once, SIGKILLs lose nothing', async (t) => {
    t.diagnostic(`seed ${SEED} (replay with CRASH_SEED=${SEED})`);
    const random = seededRandom(SEED + 1);
    const directory = temporaryDirectory('crash-two');
    const database = directory.file('petstore.db');
    const ledger = createLedger();
    const services: Array<ServiceProcess | undefined> = [undefined, undefined];
    const urls: string[] = ['', ''];
    let crossReads = 0;
    let listingReads = 0;

    /** A write acknowledged by one process must be visible through the other at once: by id, and in its listing. */
    const readThroughOther = async (pet: Pet, target: number) => {
      const other = urls[1 - target]!;
      try {
        const headers = { authorization: `Bearer ${KEY}` };
        const byId = await fetch(`${other}/pets/${pet.id}`, { headers });
        const text = await byId.text();
        if (byId.status !== 200 || text !== JSON.stringify(pet)) ledger.problems.push(`pet ${pet.id} acknowledged by process ${target} reads as ${byId.status} ${text} through the other`);
        crossReads++;
        if (pet.id > 100) return;
        const listing = (await (await fetch(`${other}/pets?limit=100`, { headers })).json()) as Pet[];
        if (!listing.some((listed) => JSON.stringify(listed) === JSON.stringify(pet))) ledger.problems.push(`pet ${pet.id} acknowledged by process ${target} is missing from the other's listing`);
        listingReads++;
      } catch (error) {
        // The other process may be the one just killed: nothing to read through.
        if (!isConnectionLost(error)) throw error;
      }
    };

    const cycles = Math.max(1, Math.ceil(CYCLES / 2));
    let kills = 0;
    try {
      for (let cycle = 0; cycle < cycles; cycle++) {
        await Promise.all(services.map(async (running, index) => {
          if (running) return;
          services[index] = startServiceProcess(environment(database));
          urls[index] = await services[index]!.listening;
        }));
        // Kill one process or both, at a random moment.
        const choice = random();
        const victims = choice < 0.4 ? [0] : choice < 0.8 ? [1] : [0, 1];
        let stopped = false;
        const killer = killSwitch(100 + Math.floor(random() * 500), random, () => victims.forEach((index) => services[index]!.child.kill('SIGKILL')));
        const driving = drive({
          targets: urls, clients: CLIENTS, key: KEY, operations: OPERATIONS, ledger, random, round: `d${cycle}`,
          stopped: () => stopped,
          onAcknowledged: async (pet, target) => {
            killer.acknowledged();
            await readThroughOther(pet, target);
          },
        });
        await Promise.all(victims.map((index) => services[index]!.exited));
        killer.cancel();
        stopped = true;
        await driving;
        for (const index of victims) {
          services[index]!.cleanup();
          services[index] = undefined;
        }
        kills += victims.length;
      }
      for (const running of services) {
        running?.child.kill('SIGTERM');
        await running?.exited;
        running?.cleanup();
      }
      services.fill(undefined);
      const report = await finalCheck(database, ledger);
      t.diagnostic(`${describeRun(report, ledger, kills)}; ${crossReads} reads by id and ${listingReads} listings through the other process`);
      assert.deepEqual(report.problems, []);
      assert.ok(report.changesChecked > 0, 'no status change was acknowledged');
      assert.ok(crossReads > 0, 'no write was read back through the other process');
    } finally {
      for (const running of services) running?.cleanup();
      directory.remove();
    }
  });
});
