import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { typeScriptFiles } from '../support/source-files.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(folder: string): string[] {
  return typeScriptFiles(folder).map((file) => join(root, file));
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

/** Each cycle of `next` reached from `starts`, as the nodes on it, in the order they are met. */
function cyclesFrom<Node>(starts: Iterable<Node>, next: (node: Node) => Iterable<Node>): Node[][] {
  const cycles: Node[][] = [];
  const done = new Set<Node>();
  const path: Node[] = [];
  const visit = (node: Node) => {
    const onPath = path.indexOf(node);
    if (onPath >= 0) {
      cycles.push(path.slice(onPath));
      return;
    }
    if (done.has(node)) return;
    path.push(node);
    for (const each of next(node)) visit(each);
    path.pop();
    done.add(node);
  };
  for (const node of starts) visit(node);
  return cycles;
}

/** The files a file imports through relative specifiers, type-only imports included. */
function relativeImportsOf(file: string): string[] {
  return importsOf(file).filter((specifier) => specifier.startsWith('.')).map((specifier) => resolve(dirname(file), specifier));
}

/**
 * Each import cycle among the relative imports reached from `files`, type-only imports included (a
 * cycle of types is still two files that cannot be read one before the other), as the files on it.
 */
function importCycles(files: readonly string[]): string[][] {
  return cyclesFrom(files, relativeImportsOf).map((cycle) => cycle.map((file) => relative(root, file)));
}

/**
 * Each cycle among the rooms of `folder`: its files and sub-folders, a sub-folder standing for every
 * file under it, one room importing another when any file of the one imports any file of the other.
 * Rooms in a cycle cannot stand one above the other: some import runs back up.
 */
function roomCycles(folder: string): string[][] {
  const roomOf = (file: string) => relative(join(root, folder), file).split(/[\\/]/)[0]!;
  const imports = new Map<string, Set<string>>();
  for (const file of sourceFiles(folder)) {
    const room = roomOf(file);
    const targets = imports.get(room) ?? imports.set(room, new Set()).get(room)!;
    for (const target of relativeImportsOf(file)) {
      if (!target.startsWith(join(root, folder) + sep)) continue;
      if (roomOf(target) !== room) targets.add(roomOf(target));
    }
  }
  return cyclesFrom([...imports.keys()].sort(), (room) => imports.get(room) ?? []);
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
    assert.deepEqual(cyclesFrom(files, (file) => relativeImportsOf(file).filter((target) => files.has(target))), []);
  });

  it('the folders of adapters/, and those of http/, stand on one another: no two import each other, even through others', () => {
    assert.deepEqual(roomCycles('adapters'), []);
    assert.deepEqual(roomCycles(join('adapters', 'http')), []);
  });

  it('the rooms of http/ stand in their order: routes, the listing cache, the server, parsing, the guards, the pipeline; none imports one before it', () => {
    const order = ['routes', 'listing-cache', 'server', 'parsing', 'guards', 'pipeline'];
    const http = join(root, 'adapters', 'http');
    const roomOf = (file: string) => relative(http, file).split(/[\\/]/)[0]!;
    const rooms = readdirSync(http, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    assert.deepEqual(rooms.sort(), [...order].sort(), 'a room of http/ is missing from the order, or the order names one that is gone');
    const offences = sourceFiles(join('adapters', 'http')).flatMap((file) => relativeImportsOf(file)
      .filter((target) => target.startsWith(http + sep) && order.indexOf(roomOf(target)) < order.indexOf(roomOf(file)))
      .map((target) => `${relative(root, file)} imports ${relative(root, target)}`));
    assert.deepEqual(offences, []);
  });

  it('a route maps, it does not parse: no file of http/routes/ reads a body, a query or a schema check itself', () => {
    // The readers under the one body check (`readBody`) and the one page query (`parsePageQuery`), and the schema compiler.
    const rawReaders = ['readJsonObject', 'exactInteger', 'topLevelNumberText', 'readQuery', 'plainInteger', 'single', 'TypeCompiler'];
    const offences = sourceFiles(join('adapters', 'http', 'routes')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      const clauses = [...text.matchAll(/(?:^|\s)import\s[^'"]*?\{([^}]*)\}[^'"]*?from\s+['"]([^'"]+)['"]/g)];
      return clauses.flatMap(([, names, specifier]) => names!.split(',').map((name) => name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!)
        .filter((name) => rawReaders.includes(name) || specifier!.startsWith('@sinclair/typebox'))
        .map((name) => `${relative(root, file)} imports ${name} from ${specifier}`));
    });
    assert.deepEqual(offences, []);
  });

  it('the service routes by its own table: nothing under adapters/ imports a router library whose internals would hold the routes\' marks', () => {
    const offences = sourceFiles('adapters').flatMap((file) => importsOf(file).filter((specifier) => specifier.startsWith('@koa/router')).map((specifier) => `${relative(root, file)} imports ${specifier}`));
    assert.deepEqual(offences, []);
  });

  it('the room cycle finder finds rooms that import each other (guards against a walk that sees none)', () => {
    assert.deepEqual(roomCycles(join('tests', 'architecture', 'fixtures')), [['cycle-a.ts', 'cycle-b.ts']]);
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
