import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, folder, file));
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\s)(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g), ...text.matchAll(/^import\s+['"]([^'"]+)['"]/gm)];
  return specifiers.map((match) => match[1]!);
}

function topFolder(file: string, specifier: string): string {
  return relative(root, resolve(dirname(file), specifier)).split(/[\\/]/)[0]!;
}

describe('dependency direction', () => {
  it('domain imports nothing outside domain: no packages, no node: modules', () => {
    const offences = sourceFiles('domain').flatMap((file) =>
      importsOf(file)
        .filter((specifier) => !specifier.startsWith('.') || topFolder(file, specifier) !== 'domain')
        .map((specifier) => `${relative(root, file)} imports ${specifier}`),
    );
    assert.deepEqual(offences, []);
  });

  it('application imports only application and domain: no packages, no node: modules, no adapters', () => {
    const offences = sourceFiles('application').flatMap((file) =>
      importsOf(file)
        .filter((specifier) => !specifier.startsWith('.') || !['application', 'domain'].includes(topFolder(file, specifier)))
        .map((specifier) => `${relative(root, file)} imports ${specifier}`),
    );
    assert.deepEqual(offences, []);
  });

  it('the checker sees imports at all (guards against a regex that matches nothing)', () => {
    assert.ok(sourceFiles('application').flatMap(importsOf).some((specifier) => specifier.startsWith('../domain/')));
  });
});
