import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../scripts/free-port.ts';
import { installPackedClient, typeCheckProject, userEnvironment } from './support/packed-client.ts';
import { startTestService, TEST_API_KEY } from './support/test-service.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The blocks in this language of the README section with this heading, in order. */
function readmeBlocks(heading: string, language: 'ts' | 'js' | 'sh'): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `the README has a section "${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start + 1, end === -1 ? undefined : end);
  const blocks = [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
  assert.ok(blocks.length > 0, `the README has a ${language} block in "${heading}"`);
  return blocks;
}

/** The first block in this language of the README section with this heading. */
function readmeBlock(heading: string, language: 'ts' | 'js'): string {
  return readmeBlocks(heading, language)[0]!;
}

/** Runs the first ts block of the README section with this heading, as written, inside this package, as the README says (`npx tsx FILE`); answers what it printed. */
async function runReadmeBlock(heading: string, file: string): Promise<string> {
  // Inside the package, so that `petstore/...` resolves to this checkout.
  const folder = join(root, 'tests', 'artifacts');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, file);
  writeFileSync(path, readmeBlock(heading, 'ts'));
  const { stdout } = await promisify(execFile)('npx', ['tsx', path], { cwd: root, env: userEnvironment() });
  return stdout;
}

describe('README', () => {
  it('the headless example runs as written and prints what its comments say', async () => {
    const stdout = await runReadmeBlock('## Using the use cases headless', 'headless.ts');
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^\{ id: 1, name: 'Rex', categoryId: 1, status: 'pending' \}$/);
    const listing = stdout.slice(stdout.indexOf('\n') + 1, stdout.lastIndexOf('['));
    assert.match(listing, /id: 1/);
    assert.doesNotMatch(listing, /Tom/, 'Tom has no status, so the pending listing leaves him out');
    assert.match(lines.at(-1)!, /^\[ 'PetAdded', 'PetAdded', 'PetStatusChanged' \]$/);
  });

  it('the client example runs as written, in a project of its own with the packed client, and prints what its comments say', async () => {
    const api = await startTestService();
    const project = await installPackedClient().catch(async (error: unknown) => {
      await api.stop();
      throw error;
    });
    try {
      writeFileSync(project.file('example.js'), readmeBlock('## Calling the service from code: `@petstore/client`', 'js'));
      // The README's way: `node example.js`, whichever runtime runs these tests.
      const command = process.versions.deno === undefined ? process.execPath : 'node';
      const { stdout } = await promisify(execFile)(command, ['example.js'], {
        cwd: project.path,
        env: userEnvironment({ PETSTORE_URL: api.baseUrl, PETSTORE_API_KEY: TEST_API_KEY }),
      });
      const lines = stdout.trim().split('\n');
      assert.deepEqual(lines.map((line, index) => (index === 2 ? line.replace(/[0-9a-f-]{36}$/, '<id>') : line)), [
        `{ id: 1, name: 'Rex', categoryId: 1, status: 'pending' } "2"`,
        'Rex',
        '412 version_mismatch <id>',
      ]);
    } finally {
      await api.stop();
      project.remove();
    }
  });

  it('the client example type-checks as written in a user\'s strict TypeScript project (the set-up docs/client.md shows)', async () => {
    const project = await installPackedClient();
    try {
      writeFileSync(project.file('example.ts'), readmeBlock('## Calling the service from code: `@petstore/client`', 'js'));
      const checked = await typeCheckProject(project);
      assert.equal(checked, '');
    } finally {
      project.remove();
    }
  });

  it('the webhook example runs as written (its receiver on a free port instead of 4000): the receiver prints the delivery', async () => {
    const [receiverBlock = '', subscribeBlock = ''] = readmeBlocks('## Webhooks (experimental)', 'sh');
    assert.ok(receiverBlock.includes('.listen(4000, ') && subscribeBlock.includes('127.0.0.1:4000'), 'the receiver listens on 4000 and the subscription targets it');
    const port = await freePort();
    const receiver = spawn('bash', ['-c', receiverBlock.replace('.listen(4000, ', `.listen(${port}, `)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    receiver.stdout!.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    const api = await startTestService({ PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    try {
      await untilListening(port);
      const { stdout } = await promisify(execFile)('bash', ['-ec', subscribeBlock.replaceAll('127.0.0.1:4000', `127.0.0.1:${port}`)], {
        env: { ...process.env, KEY: TEST_API_KEY, B: api.baseUrl },
      });
      assert.match(stdout, /"status":"active"/, stdout);
      while (!printed.includes('"name":"Bo"')) await once(receiver.stdout!, 'data');
      assert.match(printed, /^msg_wh_\S+ \{"specversion":"1.0","id":"1",.*"type":"com.petstore.pet.added.v1",.*"data":\{"id":1,"name":"Bo","categoryId":3,"status":null\}\}$/m);
    } finally {
      receiver.kill();
      await api.stop();
    }
  });

  it('the store order tour runs as written after the curl tour: the order placed, approved and delivered, the inventory as its comment says', async () => {
    const [block = ''] = readmeBlocks('## Store orders (experimental)', 'sh');
    const api = await startTestService();
    try {
      // The curl tour's pets as it leaves them: Rex pending, Kit available, Tom without a status.
      for (const pet of [{ name: 'Rex', categoryId: 1, status: 'pending' }, { name: 'Kit', categoryId: 2, status: 'available' }, { name: 'Tom', categoryId: 2 }]) {
        assert.equal((await api.createPet(pet)).status, 201);
      }
      const { stdout } = await promisify(execFile)('bash', ['-ec', block], { env: { ...process.env, KEY: TEST_API_KEY, B: api.baseUrl } });
      // curl -s adds no line break after a body.
      const lines = stdout.trim().replaceAll('}{', '}\n{').split('\n');
      assert.equal(lines[0], '{"id":1,"petId":2,"status":"placed","complete":false}');
      assert.equal(lines.at(-1), '{"available":0,"pending":1,"sold":1}');
      // What the block's comments say it prints.
      assert.ok(block.includes(`# ${lines[0]}`) && block.includes(`# ${lines.at(-1)}:`), 'the comments show what it prints');
    } finally {
      await api.stop();
    }
  });
});

async function untilListening(port: number): Promise<void> {
  for (;;) {
    const answered = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '' }).then(() => true, () => false);
    if (answered) return;
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}
