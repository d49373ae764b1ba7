import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { docExample } from './support/doc-example.ts';
import { installPackedClient, typeCheckProject, userEnvironment } from './support/packed-client.ts';
import { startTestService, TEST_API_KEY } from './support/test-service.ts';
import type { Guard } from '../adapters/http/guards/guards.ts';

describe('docs/consumer-groups.md: the example worker', () => {
  it('runs as written with `node worker.js` in a project with the packed client and the README\'s variables: two workers share the pets added, each printed once, and stop on SIGTERM', { timeout: 120_000 }, async () => {
    const { example, file } = docExample('consumer-groups.md', 'A worker', 'consumer-group-worker-example.js', 'js');
    assert.ok(example.trim().split('\n').length <= 16, 'about 15 lines');
    assert.doesNotMatch(example, /!\)|!,|!;/, 'no TypeScript non-null assertion');
    const project = await installPackedClient();
    copyFileSync(file, project.file('worker.js'));

    // A worker asks for the group only once it listens for SIGTERM: both asking means both will stop cleanly.
    let groupRequests = 0;
    const countGroupRequests: Guard = (request) => {
      if (request.method === 'PUT' && request.url === '/v1/consumer-groups/mailer') groupRequests++;
      return undefined;
    };
    const api = await startTestService({}, { extraGuards: [countGroupRequests] });
    // The page's way: `node worker.js`, whichever runtime runs these tests.
    const node = process.versions.deno === undefined ? process.execPath : 'node';
    const workers = [0, 1].map(() => {
      const worker = spawn(node, ['worker.js'], { cwd: project.path, env: userEnvironment({ PETSTORE_URL: api.baseUrl, PETSTORE_API_KEY: TEST_API_KEY }) });
      const output = { stdout: '', stderr: '', exited: new Promise<number | null>((resolve) => worker.once('exit', resolve)) };
      worker.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
      worker.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
      return { worker, output };
    });
    const lines = () => workers.flatMap(({ output }) => output.stdout.trim().split('\n').filter(Boolean));
    try {
      // The group exists once either worker made it; events added from then on are shared.
      for (let tries = 0; tries < 600 && (await api.request('/v1/consumer-groups/mailer')).status !== 200; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      const ids: number[] = [];
      for (let index = 0; index < 6; index++) ids.push(((await (await api.createPet({ name: `Mail ${index}`, categoryId: 1 })).json()) as { id: number }).id);
      for (let tries = 0; tries < 600 && lines().length < ids.length; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(
        lines().map((line) => JSON.parse(line.split(' ').slice(2).join(' ')).id).sort((a: number, b: number) => a - b),
        ids,
        workers.map(({ output }) => output.stderr).join('\n'),
      );
      assert.ok(lines().every((line) => line.split(' ')[1] === 'com.petstore.pet.added.v1'));
      for (let tries = 0; tries < 600 && groupRequests < workers.length; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(groupRequests, workers.length, 'each worker asked for the group');
      // By pid: Deno's child_process reports a child it signalled itself as killed, even when it exited 0.
      for (const { worker } of workers) process.kill(worker.pid!, 'SIGTERM');
      assert.deepEqual(await Promise.all(workers.map(({ output }) => output.exited)), [0, 0], 'each stops cleanly on SIGTERM');
    } finally {
      for (const { worker } of workers) worker.kill();
      await api.stop();
      project.remove();
    }
  });

  it('type-checks as written, saved as worker.ts, in a user\'s strict TypeScript project', { timeout: 120_000 }, async () => {
    const { file } = docExample('consumer-groups.md', 'A worker', 'consumer-group-worker-example.js', 'js');
    const project = await installPackedClient();
    try {
      copyFileSync(file, project.file('worker.ts'));
      assert.equal(await typeCheckProject(project), '');
    } finally {
      project.remove();
    }
  });
});
