import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NODE_TS_ARGS } from './support/processes.ts';
import { docExample } from './support/doc-example.ts';
import { startTestService } from './support/test-service.ts';
import { freePort } from '../scripts/free-port.ts';
import { fastRetries } from './support/webhook-load.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('docs/webhooks.md: the example receiver', () => {
  it('runs as written, verifies the signatures and prints each event once', { timeout: 60_000 }, async () => {
    const { file } = docExample('webhooks.md', 'A receiver', 'webhook-receiver-example.ts');

    const api = await startTestService({ PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true', PETSTORE_WEBHOOK_RETRY_SCHEDULE: fastRetries(50, 200) });
    const port = await freePort();
    const created = await api.request('/v1/webhooks', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook` }),
    });
    assert.equal(created.status, 201);
    const { secret } = (await created.json()) as { secret: string };
    const receiver = spawn(process.execPath, [...NODE_TS_ARGS, file], { cwd: root, env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) } });
    let stdout = '';
    receiver.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    try {
      const pet = (await (await api.createPet({ name: 'Rex', categoryId: 1 })).json()) as { id: number };
      await api.request(`/v1/pets/${pet.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"status":"sold"}' });
      for (let tries = 0; tries < 300 && stdout.trim().split('\n').length < 2; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(stdout.trim().split('\n'), [
        `1 com.petstore.pet.added.v1 {"id":${pet.id},"name":"Rex","categoryId":1,"status":null}`,
        `2 com.petstore.pet.status-changed.v1 {"id":${pet.id},"from":null,"to":"sold"}`,
      ]);
    } finally {
      receiver.kill();
      await api.stop();
    }
  });
});
