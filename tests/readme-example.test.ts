import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NODE_TS_ARGS } from './support/processes.ts';
import { startTestService, TEST_API_KEY } from './support/test-service.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs the first ts block of the README section with this heading, as written; answers what it printed. */
async function runReadmeBlock(heading: string, file: string, environment: Record<string, string> = {}): Promise<string> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `the README has a section "${heading}"`);
  const example = /```ts\n([\s\S]*?)```/.exec(readme.slice(start))?.[1];
  assert.ok(example, `the README has a ts block in "${heading}"`);
  // Inside the package, so that `petstore/...` resolves to this checkout.
  const folder = join(root, 'tests', 'artifacts');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, file);
  writeFileSync(path, example);
  const { stdout } = await promisify(execFile)(process.execPath, [...NODE_TS_ARGS, path], { cwd: root, env: { ...process.env, ...environment } });
  return stdout;
}

describe('README', () => {
  it('the headless example runs as written and prints what its comments say', async () => {
    // The comments show Node's console; Deno's prints the same values with strings in double quotes.
    const stdout = (await runReadmeBlock('## Using the use cases headless', 'readme-example.ts')).replaceAll('"', "'");
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^\{ id: 1, name: 'Rex', categoryId: 1, status: 'pending' \}$/);
    const listing = stdout.slice(stdout.indexOf('\n') + 1, stdout.lastIndexOf('['));
    assert.match(listing, /id: 1/);
    assert.doesNotMatch(listing, /Tom/, 'Tom has no status, so the pending listing leaves him out');
    assert.match(lines.at(-1)!, /^\[ 'PetAdded', 'PetAdded', 'PetStatusChanged' \]$/);
  });

  it('the client example runs as written against the service and prints what its comments say', async () => {
    const api = await startTestService();
    try {
      const stdout = await runReadmeBlock('## Calling the service from code: `petstore/client`', 'readme-client-example.ts', {
        PETSTORE_URL: api.baseUrl,
        PETSTORE_API_KEY: TEST_API_KEY,
      });
      const lines = stdout.trim().split('\n');
      // Deno's console prints the object's strings in double quotes; the ETag keeps its own.
      lines[0] = lines[0]!.replace(/"(Rex|pending)"/g, "'$1'");
      assert.deepEqual(lines.map((line, index) => (index === 2 ? line.replace(/[0-9a-f-]{36}$/, '<id>') : line)), [
        `{ id: 1, name: 'Rex', categoryId: 1, status: 'pending' } "2"`,
        'Rex',
        '412 version_mismatch <id>',
      ]);
    } finally {
      await api.stop();
    }
  });
});
