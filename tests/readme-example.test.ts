import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NODE_TS_ARGS } from './support/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('README', () => {
  it('the headless example runs as written and prints what its comments say', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Using the use cases headless'));
    const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(example, 'the README has a ts block in its headless section');
    // Inside the package, so that `petstore/...` resolves to this checkout.
    const folder = join(root, 'tests', 'artifacts');
    mkdirSync(folder, { recursive: true });
    const file = join(folder, 'readme-example.ts');
    writeFileSync(file, example);
    const printed = (await promisify(execFile)(process.execPath, [...NODE_TS_ARGS, file], { cwd: root })).stdout;
    // The comments show Node's console; Deno's prints the same values with strings in double quotes.
    const stdout = printed.replaceAll('"', "'");
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^\{ id: 1, name: 'Rex', categoryId: 1, status: 'pending' \}$/);
    const listing = stdout.slice(stdout.indexOf('\n') + 1, stdout.lastIndexOf('['));
    assert.match(listing, /id: 1/);
    assert.doesNotMatch(listing, /Tom/, 'Tom has no status, so the pending listing leaves him out');
    assert.match(lines.at(-1)!, /^\[ 'PetAdded', 'PetAdded', 'PetStatusChanged' \]$/);
  });
});
