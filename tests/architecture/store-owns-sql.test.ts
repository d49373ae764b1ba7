import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { typeScriptFiles } from '../support/source-files.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PRODUCT_FOLDERS = ['adapters', 'application', 'domain', 'contract', 'client', 'tools'];

/** Every TypeScript file of the product, as a path from the repository's root. */
function productFiles(): string[] {
  return PRODUCT_FOLDERS.flatMap(typeScriptFiles).sort();
}

function filesMatching(pattern: RegExp): string[] {
  return productFiles().filter((file) => pattern.test(readFileSync(join(root, file), 'utf8')));
}

describe('the store owns its SQL', () => {
  it('no product file outside adapters/store/ imports Kysely', () => {
    const importing = filesMatching(/(?:from\s+|import\(\s*)['"]kysely['"]/).filter((file) => !file.startsWith(join('adapters', 'store')));
    assert.deepEqual(importing, []);
  });

  it('the log (`events`) is read in at most 3 product files', () => {
    const reading = filesMatching(/\bfrom\s+events\b|selectFrom\(\s*['"]events['"]/i);
    assert.ok(reading.length <= 3, `the events table is read in ${reading.length} files: ${reading.join(', ')}`);
  });

  it('`stream_version` is spelled in at most 3 product files', () => {
    const spelling = filesMatching(/\bstream_version\b/);
    assert.ok(spelling.length <= 3, `stream_version is spelled in ${spelling.length} files: ${spelling.join(', ')}`);
  });
});
