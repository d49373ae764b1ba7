import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { startServiceProcess } from './support/service-process.ts';

describe('npm start (the built service; on Deno, the sources as deno task start runs them)', () => {
  it('on a fresh checkout creates a development key, prints it, saves it 0600 under ./data, and serves with it', async () => {
    const started = startServiceProcess({});
    try {
      const baseUrl = await started.listening;
      const key = readFileSync(join(started.cwd, 'data', 'dev-api-key'), 'utf8').trim();
      assert.ok(started.output().stdout.includes(key), 'the key is printed');
      assert.equal(statSync(join(started.cwd, 'data', 'dev-api-key')).mode & 0o777, 0o600);
      assert.ok(statSync(join(started.cwd, 'data', 'petstore.db')).isFile());
      const created = await fetch(`${baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      });
      assert.equal(created.status, 201);
      started.signal('SIGTERM');
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 0);
    } finally {
      started.cleanup();
    }
  });

  it('finishes a request in flight on SIGINT and exits 0', async () => {
    const started = startServiceProcess({ PETSTORE_API_KEYS: 'k'.repeat(20) });
    try {
      const baseUrl = await started.listening;
      const pending = fetch(`${baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${'k'.repeat(20)}`, 'content-type': 'application/json' },
        body: new ReadableStream({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode('{"name":"Rex",'));
            await new Promise((resolveWait) => setTimeout(resolveWait, 300));
            started.signal('SIGINT');
            await new Promise((resolveWait) => setTimeout(resolveWait, 300));
            controller.enqueue(new TextEncoder().encode('"categoryId":1}'));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      const response = await pending;
      assert.equal(response.status, 201);
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 0);
    } finally {
      started.cleanup();
    }
  });

  it('refuses to start in production without a key, naming the variable', async () => {
    const started = startServiceProcess({ PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'https://api.example.com/v1' });
    try {
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 1);
      assert.match(started.output().stderr, /PETSTORE_API_KEYS/);
    } finally {
      started.cleanup();
    }
  });

  it('refuses a bad variable with a message naming it', async () => {
    const started = startServiceProcess({ PORT: 'abc' });
    try {
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 1);
      assert.match(started.output().stderr, /configuration error: PORT is invalid/);
    } finally {
      started.cleanup();
    }
  });

  it('refuses a bad key naming PETSTORE_API_KEYS and its position, printing no key', async () => {
    const started = startServiceProcess({ PETSTORE_API_KEYS: 'prod-secret-key-0123456789abcdef,bad!key' });
    try {
      const [code] = await once(started.child, 'exit');
      assert.equal(code, 1);
      const { stdout, stderr } = started.output();
      assert.match(stderr, /configuration error: PETSTORE_API_KEYS is invalid: the 2nd of its 2 comma-separated keys/);
      assert.doesNotMatch(stdout + stderr, /prod-secret|bad!key/);
    } finally {
      started.cleanup();
    }
  });
});
