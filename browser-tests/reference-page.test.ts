import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { startTestService } from '../tests/support/test-service.ts';
import type { TestService } from '../tests/support/test-service.ts';

/** Debian's Chromium; `npm run test:browser` installs it when it is missing. */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = resolve(import.meta.dirname, '..', 'tests', 'artifacts');

let api: TestService;
let browser: Browser;
let page: Page;
const requested: string[] = [];
const pageErrors: string[] = [];

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run \`npm run test:browser\`, which installs it (apt-get install -y chromium)`);
  api = await startTestService();
  // Chromium's sandbox refuses to run as root (CI runs as root).
  browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => pageErrors.push(error.message));
  const response = await page.goto(`${api.baseUrl}/docs`);
  assert.equal(response?.status(), 200);
  await page.locator('.opblock').nth(3).waitFor({ timeout: 30_000 });
});

after(async () => {
  await browser?.close();
  await api?.stop();
});

describe('GET /v1/docs in a browser', () => {
  it('shows the operations listPets, createPet and getPet by name, and changePetStatus', async () => {
    const operationIds = await page.locator('.opblock-summary-operation-id').allInnerTexts();
    for (const name of ['listPets', 'createPet', 'getPet', 'changePetStatus']) assert.ok(operationIds.includes(name), `${name} in ${operationIds.join(', ')}`);
  });

  it('shows getPet, and only getPet, as deprecated', async () => {
    const deprecated = await page.locator('.opblock-deprecated .opblock-summary-operation-id').allInnerTexts();
    assert.deepEqual(deprecated, ['getPet']);
  });

  it('marks each operation\'s stability beside its path as the document says (changePetStatus experimental, getPet deprecated), the stable ones nothing', async () => {
    const badges = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) => [
      block.querySelector('.opblock-summary-operation-id')?.textContent ?? '',
      block.querySelector('.stability-badge')?.textContent ?? '',
    ]));
    type Operation = { operationId?: string; deprecated?: boolean; 'x-stability'?: string };
    const document = await (await fetch(`${api.baseUrl}/openapi.json`)).json() as { paths: Record<string, Record<string, Operation>>; webhooks?: Record<string, Record<string, Operation>> };
    const expected = [...Object.values(document.paths), ...Object.values(document.webhooks ?? {})].flatMap((path) => Object.values(path))
      .filter((operation) => typeof operation.operationId === 'string')
      .map((operation) => [operation.operationId, operation['x-stability'] ?? (operation.deprecated ? 'deprecated' : '')]);
    assert.deepEqual(badges.sort(), expected.sort());
    assert.deepEqual(badges.filter(([name]) => name === 'changePetStatus' || name === 'getPet' || name === 'listPets').sort(), [['changePetStatus', 'experimental'], ['getPet', 'deprecated'], ['listPets', '']]);
  });

  it('loaded everything from the service itself (no CDN) without a script error', () => {
    const elsewhere = requested.filter((url) => !url.startsWith(api.origin) && !url.startsWith('data:'));
    assert.deepEqual(elsewhere, []);
    assert.ok(requested.includes(`${api.baseUrl}/openapi.json`), 'the page read the document');
    assert.deepEqual(pageErrors, []);
  });

  it('saves a screenshot under tests/artifacts', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const file = join(SCREENSHOTS, 'reference-page.png');
    await page.screenshot({ path: file });
    assert.ok(existsSync(file));
  });

  it('retakes the README\'s picture, docs/reference-page.png, from / and whole: every tag of the document with every operation', async () => {
    const landing = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      assert.equal((await landing.goto(`${api.origin}/`))?.status(), 200);
      type Operation = { operationId?: string };
      const document = await (await fetch(`${api.baseUrl}/openapi.json`)).json() as { tags: { name: string }[]; paths: Record<string, Record<string, Operation>>; webhooks?: Record<string, Record<string, Operation>> };
      const operationIds = [...Object.values(document.paths), ...Object.values(document.webhooks ?? {})].flatMap((path) => Object.values(path))
        .flatMap((operation) => (typeof operation.operationId === 'string' ? [operation.operationId] : []));
      await landing.locator('.opblock').nth(operationIds.length - 1).waitFor({ timeout: 30_000 });
      const sections = await landing.locator('.opblock-tag').allInnerTexts();
      for (const { name } of document.tags) assert.ok(sections.some((section) => section.startsWith(name)), `a section ${name} in ${sections.join(' | ')}`);
      const shown = await landing.locator('.opblock-summary-operation-id').allInnerTexts();
      assert.deepEqual([...new Set(shown)].sort(), [...new Set(operationIds)].sort());
      await landing.screenshot({ path: resolve(import.meta.dirname, '..', 'docs', 'reference-page.png'), fullPage: true });
    } finally {
      await landing.close();
    }
  });

  it('shows the `after` parameter and the experimental marking once listPets and changePetStatus are opened', async () => {
    await page.locator('#operations-Pets-listPets .opblock-summary').click();
    await page.locator('#operations-Pets-listPets tr[data-param-name="after"]').waitFor();
    await page.locator('#operations-Pets-changePetStatus .opblock-summary').click();
    await page.locator('#operations-Pets-changePetStatus').getByText('x-stability').first().waitFor();
  });
});
