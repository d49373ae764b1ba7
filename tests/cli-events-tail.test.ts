import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_TS_ARGS } from './support/processes.ts';
import { runPetstore } from './support/cli.ts';
import { startTestService } from './support/test-service.ts';
import type { TestService } from './support/test-service.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const cliArgs = process.versions.deno === undefined ? [join(root, 'scripts', 'petstore.mjs')] : [...NODE_TS_ARGS, join(root, 'adapters', 'main.ts'), 'cli'];

describe('petstore events tail', () => {
  let api: TestService;
  let environment: Record<string, string>;
  before(async () => {
    api = await startTestService();
    environment = { PETSTORE_DATABASE: join(api.directory, 'petstore.db'), PETSTORE_LOG_LEVEL: 'silent' };
    assert.equal((await api.createPet({ name: 'Rex', categoryId: 1 })).status, 201);
  });
  after(() => api.stop());

  it('prints the log, then each new commit of the service as it happens, and stops cleanly on SIGTERM', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [...cliArgs, 'events', 'tail', '--json'], { env: { ...process.env, ...environment }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const lines = async (count: number) => {
      while (stdout.split('\n').length - 1 < count) await new Promise((resolve) => setTimeout(resolve, 20));
      return stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; type: string; data: { name?: string } });
    };
    try {
      assert.deepEqual((await lines(1)).map((event) => [event.id, event.data.name]), [['1', 'Rex']]);
      assert.equal((await api.createPet({ name: 'Kit', categoryId: 1 })).status, 201);
      assert.deepEqual((await lines(2)).map((event) => [event.id, event.type, event.data.name]), [
        ['1', 'com.petstore.pet.added.v1', 'Rex'], ['2', 'com.petstore.pet.added.v1', 'Kit'],
      ]);
      // By pid: Deno reports a child it signalled itself as killed even when it caught the signal and exited 0.
      process.kill(child.pid!, 'SIGTERM');
      assert.equal(await exited, 0, stderr);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('refuses an unknown --type or a bad --after with exit code 2', async () => {
    const refused = await runPetstore(['events', 'tail', '--type', 'PetAdded'], environment);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--type must be one of com\.petstore\.pet\.added\.v1/);
    const badAfter = await runPetstore(['events', 'tail', '--after', '-1'], environment);
    assert.equal(badAfter.code, 2);
  });
});
