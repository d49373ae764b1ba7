import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The first block in `language` (ts unless said) of a docs page's section, as written, saved under tests/artifacts to be run. */
export function docExample(page: string, heading: string, fileName: string, language: 'ts' | 'js' = 'ts'): { readonly example: string; readonly file: string } {
  const text = readFileSync(join(root, 'docs', page), 'utf8');
  const section = text.slice(text.indexOf(`\n## ${heading}\n`));
  const example = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1];
  assert.ok(example, `docs/${page} has a ${language} block in its section "${heading}"`);
  const folder = join(root, 'tests', 'artifacts');
  mkdirSync(folder, { recursive: true });
  const file = join(folder, fileName);
  writeFileSync(file, example);
  return { example, file };
}
