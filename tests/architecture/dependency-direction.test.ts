import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
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

/**
 * The modules a file loads when it runs: every import except `import type` / `export type`.
 * (`import { type X }` still loads its module, so it counts.)
 */
function runtimeImportsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const statements = [...text.matchAll(/(?:^|\s)(?:import|export)\s+(type\s)?[^'"]*?from\s+['"]([^'"]+)['"]/g)]
    .filter((match) => match[1] === undefined)
    .map((match) => match[2]!);
  const bare = [...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g), ...text.matchAll(/^import\s+['"]([^'"]+)['"]/gm)].map((match) => match[1]!);
  return [...statements, ...bare];
}

/** Every file reached from `entry` through runtime imports, and every specifier that leads outside relative files. */
function runtimeGraph(entry: string): { files: string[]; offences: string[] } {
  const files = new Set<string>();
  const offences: string[] = [];
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of runtimeImportsOf(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else offences.push(`${relative(root, file)} imports ${specifier}`);
    }
  };
  visit(entry);
  return { files: [...files].map((file) => relative(root, file)).sort(), offences };
}

/**
 * Each import cycle among the relative imports reached from `files`, type-only imports included (a
 * cycle of types is still two files that cannot be read one before the other), as the files on it.
 */
function importCycles(files: readonly string[]): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const onPath = path.indexOf(file);
    if (onPath >= 0) {
      cycles.push(path.slice(onPath).map((each) => relative(root, each)));
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const specifier of importsOf(file)) if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
    path.pop();
    done.add(file);
  };
  for (const file of files) visit(file);
  return cycles;
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

  it('the client loads only its own files when it runs: no packages, no node: modules, no server code', () => {
    const { files, offences } = runtimeGraph(join(root, 'client', 'index.ts'));
    assert.deepEqual(offences, []);
    assert.deepEqual(files.filter((file) => !file.startsWith(`client${sep}`)), []);
    assert.ok(files.includes(join('client', 'exchange.ts')), 'the walk reaches the client\'s files');
  });

  it('the client shares the contract with the server, as type-only imports, and imports nothing from adapters/', () => {
    const imports = sourceFiles('client').flatMap(importsOf);
    assert.ok(imports.some((specifier) => specifier.endsWith('contract/schemas.ts')));
    assert.deepEqual(imports.filter((specifier) => specifier.includes('adapters/')), []);
    assert.ok(sourceFiles('client').flatMap(runtimeImportsOf).every((specifier) => !specifier.includes('contract/')));
  });

  it('the contract imports nothing from adapters/: the client and the server share it', () => {
    const offences = sourceFiles('contract').flatMap((file) =>
      importsOf(file)
        .filter((specifier) => specifier.startsWith('.') && !['contract', 'application', 'domain'].includes(topFolder(file, specifier)))
        .map((specifier) => `${relative(root, file)} imports ${specifier}`),
    );
    assert.deepEqual(offences, []);
  });

  it('the history checker is product-neutral: it imports the domain and the contract, nothing of adapters/ or tests/', () => {
    const files = sourceFiles(join('tools', 'check-history'));
    assert.ok(files.length > 0);
    const offences = files.flatMap((file) =>
      importsOf(file)
        .filter((specifier) => specifier.startsWith('.') && !['tools', 'contract', 'application', 'domain'].includes(topFolder(file, specifier)))
        .map((specifier) => `${relative(root, file)} imports ${specifier}`),
    );
    assert.deepEqual(offences, []);
  });

  it('the HTTP adapter, the contract and the client have no import cycles, type-only imports included', () => {
    const folders = [join('adapters', 'http'), 'contract', 'client'];
    assert.deepEqual(importCycles(folders.flatMap(sourceFiles)), []);
  });

  it('the cycle finder finds a cycle (guards against a walk that sees none)', () => {
    const cycles = importCycles([join(root, 'tests', 'architecture', 'fixtures', 'cycle-a.ts')]);
    assert.deepEqual(cycles, [[join('tests', 'architecture', 'fixtures', 'cycle-a.ts'), join('tests', 'architecture', 'fixtures', 'cycle-b.ts')]]);
  });

  it('adapters/ holds folders by capability; at its root only the composition root', () => {
    const loose = readdirSync(join(root, 'adapters'), { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
    assert.deepEqual(loose.sort(), ['main.ts', 'service.ts']);
  });

  it('only the entry points read the environment', () => {
    const readers = ['adapters', 'application', 'domain', 'client', 'contract']
      .flatMap((folder) => sourceFiles(folder))
      .filter((file) => readFileSync(file, 'utf8').includes('process.' + 'env'))
      .map((file) => relative(root, file));
    assert.deepEqual(readers, [join('adapters', 'main.ts')]);
  });

  it('modules of the command line never import each other in a circle', () => {
    const files = new Set(sourceFiles(join('adapters', 'cli')));
    const cycles: string[] = [];
    const visiting: string[] = [];
    const done = new Set<string>();
    const visit = (file: string) => {
      if (done.has(file)) return;
      const seen = visiting.indexOf(file);
      if (seen >= 0) {
        cycles.push([...visiting.slice(seen), file].map((each) => relative(root, each)).join(' -> '));
        return;
      }
      visiting.push(file);
      for (const specifier of importsOf(file).filter((each) => each.startsWith('.'))) {
        const target = resolve(dirname(file), specifier);
        if (files.has(target)) visit(target);
      }
      visiting.pop();
      done.add(file);
    };
    for (const file of files) visit(file);
    assert.deepEqual(cycles, []);
  });

  it('the checker sees imports at all (guards against a regex that matches nothing)', () => {
    assert.ok(sourceFiles('application').flatMap(importsOf).some((specifier) => specifier.startsWith('../domain/')));
  });
});

describe('sources that run on Deno too', () => {
  it('locate files from import.meta.url, not its dirname shortcut (which Deno types as possibly undefined)', () => {
    const offences = ['adapters', 'application', 'contract', 'domain', 'client', 'tests']
      .flatMap((folder) => sourceFiles(folder))
      .filter((file) => readFileSync(file, 'utf8').includes('import.meta.' + 'dirname'))
      .map((file) => relative(root, file));
    assert.deepEqual(offences, []);
  });
});
