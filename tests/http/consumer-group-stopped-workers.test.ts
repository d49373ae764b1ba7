import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NODE_TS_ARGS } from '../support/processes.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

const WORKER = fileURLToPath(new URL('../support/waiting-claim-worker.ts', import.meta.url));

interface GroupView {
  readonly inFlight: number;
  readonly consumers: readonly { readonly consumer: string; readonly inFlight: number }[];
}

describe('worker processes stopped while their claims wait, over HTTP', () => {
  let api: TestService;
  const send = (method: string, path: string, body?: unknown) =>
    api.request(`/v1/consumer-groups${path}`, {
      method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  const group = async (name: string) => (await (await send('GET', `/${name}`)).json()) as GroupView;

  before(async () => {
    api = await startTestService();
  });
  after(() => api.stop());

  it('a worker killed (SIGKILL) and one stopped (SIGTERM) take no lease: the next event goes to a live worker at once, not after ackTimeoutMs', async () => {
    assert.equal((await send('PUT', '/stopped-workers', { start: 'end', ackTimeoutMs: 30_000 })).status, 201);
    const workers = ['killed', 'terminated'].map((consumer) => {
      const child = spawn(process.execPath, [...NODE_TS_ARGS, WORKER, api.origin, TEST_API_KEY, 'stopped-workers', consumer], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      let ended = false;
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => {
        ended = true;
        resolve(signal ?? code);
      }));
      return { consumer, child, exited, ended: () => ended, output: () => output };
    });
    try {
      // Both claims are waiting once the group shows both consumers (a claim shows its consumer at its first look).
      for (;;) {
        const shown = new Set((await group('stopped-workers')).consumers.map((consumer) => consumer.consumer));
        if (shown.has('killed') && shown.has('terminated')) break;
        const gone = workers.find((worker) => worker.ended());
        assert.ok(!gone, `a worker ended before it was stopped: ${gone?.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      process.kill(workers[0]!.child.pid!, 'SIGKILL');
      process.kill(workers[1]!.child.pid!, 'SIGTERM');
      assert.deepEqual(await Promise.all(workers.map((worker) => worker.exited)), ['SIGKILL', 'SIGTERM']);
      assert.deepEqual(workers.map((worker) => worker.output()), ['', ''], 'neither stopped worker was answered');

      // A live worker waits too, behind the stopped ones' claims if the service still holds them.
      const live = send('POST', '/stopped-workers/claims', { consumer: 'live', waitMs: 5_000 });
      const pet = await api.createPet({ name: 'For the living', categoryId: 1 });
      assert.equal(pet.status, 201);
      const { id } = (await pet.json()) as { id: number };
      const answer = await live;
      assert.equal(answer.status, 200);
      const { claims } = (await answer.json()) as { claims: { event: { subject: string }; deliveries: number }[] };
      // Within the live claim's 5 s wait, far short of the 30 s a lease on a stopped worker would hold it.
      assert.deepEqual(claims.map((claim) => [claim.event.subject, claim.deliveries]), [[`pets/${id}`, 1]], 'the live worker got the event, delivered once');
      const after = await group('stopped-workers');
      assert.equal(after.inFlight, 1);
      assert.deepEqual(
        after.consumers.filter((consumer) => consumer.inFlight > 0).map((consumer) => [consumer.consumer, consumer.inFlight]),
        [['live', 1]],
        'no stopped worker holds a lease',
      );
    } finally {
      for (const worker of workers) worker.child.kill('SIGKILL');
    }
  });
});
