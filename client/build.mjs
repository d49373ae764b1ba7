#!/usr/bin/env node
// Builds the client's package into dist/ (npm pack runs it as `prepack`): index.js, one ES module
// bundle of the client, and .d.ts types that refer to nothing outside dist/. The client's types come
// from the service's schemas in contract/ through `Static<typeof …Schema>`; here each of those is
// written out as the plain type the schema describes, so the package needs neither TypeBox nor the
// service. `node build.mjs --clean` removes dist/ (postpack).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');

if (process.argv.includes('--clean')) {
  rmSync(dist, { recursive: true, force: true });
  process.exit(0);
}

/**
 * `types.ts` with every `Static<typeof X>` written out from the schema X, and its imports of the
 * service's sources and of TypeBox gone. Fails on anything else it would have to carry along.
 */
export async function selfContainedTypes(source = readFileSync(join(here, 'types.ts'), 'utf8')) {
  const schemas = new Map();
  const imports = [...source.matchAll(/^import type \{([^}]*)\} from '([^']+)';\n/gm)];
  for (const [, names, specifier] of imports) {
    if (specifier === '@sinclair/typebox') continue;
    if (!specifier.startsWith('../')) throw new Error(`client/types.ts imports ${specifier}: only the service's schemas and TypeBox's Static can be written out`);
    const module = await import(pathToFileURL(join(here, specifier)).href);
    for (const name of names.split(',').map((each) => each.trim()).filter(Boolean)) {
      if (module[name] === undefined) throw new Error(`client/types.ts imports ${name} from ${specifier}: not a schema (a value) of that module`);
      schemas.set(name, module[name]);
    }
  }
  let written = source.replace(/^import type \{[^}]*\} from '[^']+';\n/gm, '');
  const schemaNamed = (name) => {
    const schema = schemas.get(name);
    if (schema === undefined) throw new Error(`client/types.ts: Static<typeof ${name}> names no imported schema`);
    return schema;
  };
  // One field of a schema (`Static<typeof X>['field']`) is written as that field's type alone.
  written = written.replace(/Static<typeof (\w+)>\['(\w+)'\]/g, (_, name, field) => `(${typeOf(schemaNamed(name).properties[field], '')})`);
  written = written.replace(/Static<typeof (\w+)>/g, (_, name) => `(${typeOf(schemaNamed(name), '')})`);
  for (const name of schemas.keys()) {
    if (new RegExp(`\\b${name}\\b`).test(written)) throw new Error(`client/types.ts uses ${name} other than in Static<typeof ${name}>`);
  }
  return written;
}

const KIND = Symbol.for('TypeBox.Kind');
const OPTIONAL = Symbol.for('TypeBox.Optional');
const READONLY = Symbol.for('TypeBox.Readonly');

/** The TypeScript type a TypeBox schema stands for (what TypeBox's Static answers), as source text. */
function typeOf(schema, indent) {
  switch (schema[KIND]) {
    case 'Literal':
      return JSON.stringify(schema.const);
    case 'String':
      return 'string';
    case 'Integer':
    case 'Number':
      return 'number';
    case 'Boolean':
      return 'boolean';
    case 'Null':
      return 'null';
    case 'Unknown':
      return 'unknown';
    case 'Union':
      return schema.anyOf.map((member) => typeOf(member, indent)).join(' | ');
    case 'Array': {
      const items = typeOf(schema.items, indent);
      return /^[\w"]+$/.test(items) ? `${items}[]` : `(${items})[]`;
    }
    case 'Object': {
      const inner = `${indent}  `;
      const fields = Object.entries(schema.properties).map(([name, property]) => {
        const doc = property.description ? `${inner}/** ${property.description.replaceAll('*/', '*\\/')} */\n` : '';
        const modifier = property[READONLY] === 'Readonly' ? 'readonly ' : '';
        const optional = property[OPTIONAL] === 'Optional' ? '?' : '';
        const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
        return `${doc}${inner}${modifier}${key}${optional}: ${typeOf(property, inner)};\n`;
      });
      return `{\n${fields.join('')}${indent}}`;
    }
    default:
      throw new Error(`client/build.mjs cannot write out a TypeBox ${String(schema[KIND])} schema; add it to typeOf`);
  }
}

async function build() {
  rmSync(dist, { recursive: true, force: true });
  const { build: bundle } = await import('esbuild');
  await bundle({
    entryPoints: [join(here, 'index.ts')],
    outfile: join(dist, 'index.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    legalComments: 'none',
    logLevel: 'warning',
  });

  // The declarations are emitted from a copy of the sources whose types.ts is self-contained, in a
  // folder outside the repository, so that nothing of it can be reached from there.
  const staging = mkdtempSync(join(tmpdir(), 'petstore-client-build-'));
  try {
    for (const file of readdirSync(here).filter((name) => name.endsWith('.ts') && name !== 'types.ts')) cpSync(join(here, file), join(staging, file));
    writeFileSync(join(staging, 'types.ts'), await selfContainedTypes());
    const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
    writeFileSync(join(staging, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(staging, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        declaration: true, emitDeclarationOnly: true, rewriteRelativeImportExtensions: true, allowImportingTsExtensions: true,
        strict: true, exactOptionalPropertyTypes: true, verbatimModuleSyntax: true, skipLibCheck: true,
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2024', 'DOM', 'DOM.Iterable'], types: [],
        rootDir: '.', outDir: dist,
      },
      files: ['index.ts'],
    }));
    execFileSync(process.execPath, [tsc, '-p', staging], { stdio: 'inherit', cwd: staging });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }

  for (const file of readdirSync(dist).filter((name) => name.endsWith('.d.ts'))) {
    const text = readFileSync(join(dist, file), 'utf8').replace(/(from '\.\/[\w-]+)\.ts'/g, "$1.js'");
    const outside = [...text.matchAll(/(?:from |import\()'([^']+)'/g)].map((match) => match[1]).filter((specifier) => !/^\.\/[\w-]+\.js$/.test(specifier));
    if (outside.length > 0 || /\/\/\/ <reference/.test(text)) throw new Error(`dist/${file} refers outside the package: ${outside.join(', ') || 'a /// reference'}`);
    writeFileSync(join(dist, file), text);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // The schemas are TypeScript: tsx loads them.
  const { register } = await import('tsx/esm/api');
  register();
  try {
    await build();
  } catch (error) {
    rmSync(dist, { recursive: true, force: true });
    throw error;
  }
}
