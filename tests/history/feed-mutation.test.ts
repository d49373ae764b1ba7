import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../support/seeded-random.ts';
import { sqliteDeployment } from './deployments.ts';
import { startDroppingProxy } from './dropping-proxy.ts';
import { recordAndCheck } from './record-history.ts';

describe('the history checker on a real run of a mutated service', () => {
  it('names feed-skip, and only that, when a proxy drops one event from an event stream', { timeout: 120_000 }, async (t) => {
    const deployment = await sqliteDeployment();
    const proxy = await startDroppingProxy(deployment.instances[0]!.base);
    try {
      const line = await recordAndCheck(deployment, {
        seconds: 3, random: seededRandom(35), say: (message) => t.diagnostic(message), streamBases: [proxy.base], withNemeses: false, clients: 4,
        fileLabel: 'mutated-service-expect-feed-skip-sqlite',
      });
      assert.ok(proxy.dropped !== undefined, 'the proxy dropped no event: no stream sent three');
      assert.deepEqual(Object.keys(line.anomalies), ['feed-skip'], JSON.stringify(line.anomalies).slice(0, 2000));
      const findings = line.anomalies['feed-skip'] as { positions: number[]; why: string }[];
      assert.deepEqual(findings.map((finding) => finding.positions), [[proxy.dropped]]);
      assert.match(findings[0]!.why, /^stream-\d/);
      assert.equal(line.valid, false);
      assert.equal(line.unusable, 0, "the recorder writes no record the checker cannot use");
      assert.match(line.history, /^tests\/artifacts\/mutated-service-expect-feed-skip-sqlite-/);
      t.diagnostic(`${line.ops} operations; dropped position ${proxy.dropped}; ${line.history}`);
    } finally {
      await proxy.close();
      await deployment.close();
    }
  });
});
