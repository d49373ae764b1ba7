import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../support/seeded-random.ts';
import { sqliteDeployment } from './deployments.ts';
import type { Nemesis } from './nemeses.ts';
import { recordAndCheck } from './record-history.ts';

const HELD_MS = 1500;

/** A fault that does nothing for a while: what matters here is how the run reports when it began and ended. */
const idleFault: Nemesis = {
  name: 'idle-fault',
  applies: () => true,
  async run() {
    await new Promise((resolve) => setTimeout(resolve, HELD_MS));
    return `held ${HELD_MS} ms`;
  },
};

describe('test:history reports its faults', () => {
  it('prints each fault with the time it began and the time it ended, not the time it healed alone', { timeout: 120_000 }, async () => {
    const deployment = await sqliteDeployment();
    const said: string[] = [];
    try {
      const line = await recordAndCheck(deployment, {
        seconds: 3, random: seededRandom(7), say: (message) => said.push(message), clients: 2, groupConsumers: 1,
        schedule: [{ at: 0.5, nemesis: idleFault }], fileLabel: 'fault-schedule-sqlite',
      });
      assert.equal(line.valid, true, JSON.stringify(line.anomalies).slice(0, 2000));
      assert.deepEqual(line.nemeses, ['idle-fault']);
      const begins = said.find((message) => / s idle-fault begins$/.test(message));
      assert.ok(begins, `no line says when the fault began: ${said.join(' | ')}`);
      const ended = said.map((message) => /: ([\d.]+) s to ([\d.]+) s idle-fault: held/.exec(message)).find((match) => match !== null);
      assert.ok(ended, `no line gives the fault's start and end: ${said.join(' | ')}`);
      const [start, end] = [Number(ended[1]), Number(ended[2])];
      assert.ok(start >= 0.4 && start < end, `${start} s to ${end} s`);
      assert.ok(end - start >= (HELD_MS - 100) / 1000, `the fault lasted ${HELD_MS} ms, the line says ${start} s to ${end} s`);
    } finally {
      await deployment.close();
    }
  });
});
