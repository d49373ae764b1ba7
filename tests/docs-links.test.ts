import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!)));
}

describe('the docs\' links', () => {
  it('each link to a page of this repository names a file that exists and, with a #, a heading it has', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = path === '' ? page : relative(root, join(root, dirname(page), path));
        if (!existsSync(join(root, file))) {
          broken.push(`${page}: ${target} (no file ${file})`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor)) broken.push(`${page}: ${target} (no such heading in ${file})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('the README points to where to change what, which comes early in architecture.md', () => {
    assert.match(readFileSync(join(root, 'README.md'), 'utf8'), /\]\(docs\/architecture\.md#where-to-change-what\)/);
    const headings = [...readFileSync(join(root, 'docs', 'architecture.md'), 'utf8').matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    assert.ok(headings.indexOf('Where to change what') <= 1, `"Where to change what" is heading ${headings.indexOf('Where to change what') + 1} of ${headings.length}`);
  });
});
