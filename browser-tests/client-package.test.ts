import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { installPackedClient } from '../tests/support/packed-client.ts';
import type { ClientProject } from '../tests/support/packed-client.ts';
import { startTestService, TEST_API_KEY } from '../tests/support/test-service.ts';
import type { TestService } from '../tests/support/test-service.ts';

/** Debian's Chromium; `npm run test:browser` installs it when it is missing. */
const CHROMIUM = '/usr/bin/chromium';

// A page as a user without a bundler writes it: the installed package's module, named by an import map.
const PAGE = `<!doctype html>
<script type="importmap">{ "imports": { "@petstore/client": "/node_modules/@petstore/client/dist/index.js" } }</script>
<title>client</title>`;

let project: ClientProject;
let site: Server;
let siteOrigin: string;
let api: TestService;
let browser: Browser;

/** Serves the page and the project's installed client, nothing else. */
function serveProject(folder: string): Promise<Server> {
  const server = createServer((request, response) => {
    const path = normalize(new URL(request.url ?? '/', 'http://site').pathname);
    if (path === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const file = join(folder, path);
    if (!path.startsWith('/node_modules/@petstore/client/') || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run \`npm run test:browser\`, which installs it (apt-get install -y chromium)`);
  project = await installPackedClient();
  site = await serveProject(project.path);
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  // The page calls the service from another origin, which the service must allow.
  api = await startTestService({ PETSTORE_CORS_ORIGINS: siteOrigin });
  // Chromium's sandbox refuses to run as root (CI runs as root).
  browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
});

after(async () => {
  await browser?.close();
  await api?.stop();
  site?.close();
  project?.remove();
});

describe('the packed client in Chromium', () => {
  it('loads as an ES module from the installed package and calls the service from another origin', async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${siteOrigin}/`);
    const result = await page.evaluate(async ({ baseUrl, apiKey }) => {
      // A bare specifier, resolved by the page's import map as a user's page would.
      const specifier = '@petstore/client';
      const { createPetStoreClient, PetStoreError } = await import(specifier) as typeof import('petstore/client');
      const petstore = createPetStoreClient({ baseUrl, apiKey });
      const pet = await petstore.createPet({ name: 'Browsed', categoryId: 2 });
      const { etag } = await petstore.changePetStatus(pet.id, 'pending');
      const names: string[] = [];
      for await (const each of petstore.pets({ status: 'pending' })) names.push(each.name);
      let refused: unknown;
      try {
        await petstore.changePetStatus(pet.id, 'sold', { ifMatch: '"1"' });
      } catch (error) {
        refused = error instanceof PetStoreError ? [error.status, error.code] : String(error);
      }
      return { pet, etag, names, refused, position: petstore.position };
    }, { baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
    assert.deepEqual(result, {
      pet: { id: 1, name: 'Browsed', categoryId: 2 },
      etag: '"2"',
      names: ['Browsed'],
      refused: [412, 'version_mismatch'],
      position: 2,
    });
    assert.deepEqual(pageErrors, []);
    await page.close();
  });
});
