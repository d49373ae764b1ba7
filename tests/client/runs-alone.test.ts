import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NODE_TS_ARGS } from '../support/processes.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';
import type { TemporaryDirectory } from '../support/temporary-store.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

// What a caller's program does with the client, copied on its own where no package and no server code can be found.
const PROGRAM = `
import { createPetStoreClient } from './client/index.ts';

const [baseUrl, apiKey] = process.argv.slice(2);
const notices: string[] = [];
const client = createPetStoreClient({ baseUrl: baseUrl!, apiKey: apiKey!, onDeprecation: (notice) => notices.push(notice.message) });
const pet = await client.createPet({ name: 'Alone', categoryId: 1 });
const { etag } = await client.getPet(pet.id);
const changed = await client.changePetStatus(pet.id, 'sold', { ifMatch: etag });
const ids: number[] = [];
for await (const each of client.pets({ limit: 1 })) ids.push(each.id);
console.log(JSON.stringify({ pet, changed, ids, notices }));
`;

describe('the client on its own', () => {
  let api: TestService;
  let folder: TemporaryDirectory;

  before(async () => {
    api = await startTestService();
    folder = temporaryDirectory('client-alone');
  });
  after(async () => {
    await api.stop();
    folder.remove();
  });

  it('runs from a copy of client/ alone: its type-only imports of the server\'s schemas are gone at run time', async () => {
    // Its sources: client/dist is what `npm pack` builds, and removes again, in other tests running beside this one.
    cpSync(join(root, 'client'), folder.file('client'), { recursive: true, filter: (path) => path !== join(root, 'client', 'dist') });
    // The project's compiler settings (verbatimModuleSyntax decides which imports survive).
    cpSync(join(root, 'tsconfig.json'), folder.file('tsconfig.json'));
    // An ES module package that depends on nothing.
    writeFileSync(folder.file('package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(folder.file('program.ts'), PROGRAM);
    const { stdout } = await promisify(execFile)(process.execPath, [...NODE_TS_ARGS, 'program.ts', api.baseUrl, TEST_API_KEY], { cwd: folder.path });
    const { pet, changed, ids, notices } = JSON.parse(stdout) as { pet: { id: number }; changed: unknown; ids: number[]; notices: string[] };
    assert.deepEqual(changed, { pet: { id: pet.id, name: 'Alone', categoryId: 1, status: 'sold' }, etag: '"2"' });
    assert.deepEqual(ids, [pet.id]);
    assert.equal(notices.length, 1);
  });
});
