import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureDeno } from '../../scripts/run-deno-tests.mjs';
import { installPackedClient, userEnvironment } from '../support/packed-client.ts';
import type { ClientProject } from '../support/packed-client.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const version = (path: string) => (JSON.parse(readFileSync(join(root, path), 'utf8')) as { version: string }).version;

// A user's program in plain JavaScript: what it prints is checked below, the same on Node and Deno.
const PROGRAM = `
import { createPetStoreClient, PetStoreError } from '@petstore/client';

const [baseUrl, apiKey] = [process.env.PETSTORE_URL, process.env.PETSTORE_API_KEY];
const petstore = createPetStoreClient({ baseUrl, apiKey, onDeprecation: () => {} });
const pet = await petstore.createPet({ name: 'Packed', categoryId: 3 });
const { etag } = await petstore.changePetStatus(pet.id, 'pending');
const names = [];
for await (const each of petstore.pets({ status: 'pending' })) names.push(each.name);
let refused;
try {
  await petstore.changePetStatus(pet.id, 'sold', { ifMatch: '"1"' });
} catch (error) {
  refused = error instanceof PetStoreError ? [error.status, error.code] : String(error);
}
let missingKey;
try {
  createPetStoreClient({ baseUrl, apiKey: undefined });
} catch (error) {
  missingKey = error.message;
}
console.log(JSON.stringify({ pet, etag, names, refused, missingKey }));
`;

// A user's TypeScript, checked by the project's own tsc: the types must describe the service, so the
// marked lines must be errors (an \`any\` anywhere would make them pass, and tsc would then complain).
const TYPED_PROGRAM = `
import { createPetStoreClient, PetStoreError } from '@petstore/client';
import type { CloudEvent, NewPet, Pet, PetStatus, PetStoreErrorCode } from '@petstore/client';

const petstore = createPetStoreClient({ baseUrl: 'http://127.0.0.1:3000/v1', apiKey: 'a-key-of-16-chars' });
const newPet: NewPet = { name: 'Rex', categoryId: 1, status: 'available' };
export async function tour(): Promise<PetStatus | undefined> {
  const pet: Pet = await petstore.createPet(newPet);
  try {
    await petstore.changePetStatus(pet.id, 'sold', { ifMatch: '"1"' });
  } catch (error) {
    if (error instanceof PetStoreError) {
      const code: PetStoreErrorCode = error.code;
      if (code === 'version_mismatch') return undefined;
    }
  }
  for await (const event of petstore.events({ types: ['com.petstore.pet.added.v1'] })) {
    const seen: CloudEvent = event;
    if ('to' in seen.data) return seen.data.to;
  }
}
// @ts-expect-error: not a status
export const wrongStatus: PetStatus = 'lost';
// @ts-expect-error: categoryId is required
export const incomplete: NewPet = { name: 'Tom' };
// @ts-expect-error: not an error code of the service
export const wrongCode: PetStoreErrorCode = 'teapot';
`;

describe('the client as a user installs it: npm pack, then npm install of the tarball in a fresh project', () => {
  let api: TestService;
  let project: ClientProject;

  before(async () => {
    api = await startTestService();
    project = await installPackedClient();
    writeFileSync(project.file('main.js'), PROGRAM);
  });
  after(async () => {
    await api?.stop();
    project?.remove();
  });

  it('has the service\'s version', () => {
    assert.equal(version('client/package.json'), version('package.json'));
  });

  it('is the size the README and docs/client.md say, within a tenth', () => {
    for (const page of ['README.md', 'docs/client.md']) {
      const stated = /about\s+(\d+) kB packed/.exec(readFileSync(join(root, page), 'utf8'));
      assert.ok(stated, `${page} says how large the packed client is`);
      const ratio = (Number(stated[1]) * 1000) / project.tarballBytes;
      assert.ok(ratio > 0.9 && ratio < 1.1, `${page} says about ${stated[1]} kB; npm pack made ${project.tarballBytes} bytes`);
    }
  });

  it('is small, depends on nothing, and holds only JavaScript modules and their types', () => {
    assert.ok(project.tarballBytes < 60_000, `${project.tarballBytes} bytes packed`);
    const installed = join(project.path, 'node_modules', '@petstore', 'client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.dependencies, undefined);
    assert.equal(manifest.peerDependencies, undefined);
    const files = readdirSync(installed, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name).slice(installed.length + 1));
    assert.deepEqual(files.filter((file) => !/^dist\/[\w-]+\.(js|d\.ts)$/.test(file) && file !== 'package.json'), []);
    // The project's node_modules holds the client alone.
    assert.deepEqual(readdirSync(join(project.path, 'node_modules')).filter((name) => !name.startsWith('.')), ['@petstore']);
  });

  it('runs under plain node, without tsx, against the service: creates, changes, lists, and throws PetStoreError and the missing key\'s TypeError', async () => {
    const { stdout } = await run(process.execPath, ['main.js'], {
      cwd: project.path, env: userEnvironment({ PETSTORE_URL: api.baseUrl, PETSTORE_API_KEY: TEST_API_KEY }),
    });
    const { pet, etag, names, refused, missingKey } = JSON.parse(stdout) as Record<string, unknown>;
    assert.deepEqual(pet, { id: 1, name: 'Packed', categoryId: 3 });
    assert.equal(etag, '"2"');
    assert.deepEqual(names, ['Packed']);
    assert.deepEqual(refused, [412, 'version_mismatch']);
    assert.match(String(missingKey), /apiKey is missing/);
  });

  it('type-checks a program with the project\'s own tsc (strict, NodeNext, ES2022), its types refusing what the service refuses', async () => {
    writeFileSync(project.file('tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022' } }));
    writeFileSync(project.file('tour.ts'), TYPED_PROGRAM);
    const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', '.', '--noEmit'], { cwd: project.path, env: userEnvironment() })
      .then(({ stdout }) => stdout, (error: { stdout: string }) => error.stdout);
    assert.equal(checked, '');
    // The same check sees a mistake: the marks above are not silently satisfied.
    writeFileSync(project.file('tour.ts'), TYPED_PROGRAM.replace("status: 'available' }", "status: 'lost' }"));
    const broken = await run(process.execPath, [tsc, '-p', '.', '--noEmit'], { cwd: project.path, env: userEnvironment() })
      .then(({ stdout }) => stdout, (error: { stdout: string }) => error.stdout);
    assert.match(broken, /tour\.ts\(\d+,\d+\): error TS2322: Type '"lost"' is not assignable/);
  });

  it('runs on Deno, from the project\'s node_modules, with the same results', async () => {
    const { stdout } = await run(ensureDeno(), ['run', '--allow-net', '--allow-env', '--allow-read', 'main.js'], {
      cwd: project.path, env: userEnvironment({ PETSTORE_URL: api.baseUrl, PETSTORE_API_KEY: TEST_API_KEY, NO_COLOR: '1' }),
    });
    const { pet, refused } = JSON.parse(stdout) as { pet: { name: string }; refused: unknown };
    assert.equal(pet.name, 'Packed');
    assert.deepEqual(refused, [412, 'version_mismatch']);
  });
});
