#!/usr/bin/env node
// Builds the service for `npm start`: adapters/main.ts and what it imports, types stripped, bundled
// into dist/ (packages stay in node_modules). Plain Node then runs JavaScript: no TypeScript loader
// and its second V8 heap in the serving process. The PostgreSQL driver and the metrics registry are
// separate chunks, loaded only when the configuration asks for them.
// Each file is written under a temporary name and renamed, so services starting together, each
// building first, never read a file half written. The hashes of the sources it read are written
// last (dist/sources.json): `npm start` skips the build while they still match.
// With --check-configuration it first checks the environment with the service's own configuration
// module (bundled in memory, a fraction of a second) and exits 78 (EX_CONFIG) on a mistake, before building.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUILD_SCRIPT, CONFIGURATION_REFUSED, SERVICE_OUT, SOURCES_FILE, contentHash } from './service-bundle.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

if (process.argv.includes('--check-configuration')) await refuseBadConfiguration(process.env);

const { outputFiles, metafile } = await build({
  absWorkingDir: root,
  entryPoints: { main: 'adapters/main.ts' },
  outdir: SERVICE_OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  // For `node --enable-source-maps` when a stack trace should name the TypeScript lines; unread otherwise.
  sourcemap: 'linked',
  write: false,
  metafile: true,
  logLevel: 'warning',
});
mkdirSync(SERVICE_OUT, { recursive: true });
const writeAtomically = (path, contents) => {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
};
for (const file of outputFiles) writeAtomically(file.path, file.contents);
// Chunks of earlier builds (their names carry a hash of their contents) are no longer imported.
const current = new Set([...outputFiles.map((file) => basename(file.path)), basename(SOURCES_FILE)]);
for (const name of readdirSync(SERVICE_OUT)) {
  if (!current.has(name) && !name.endsWith('.tmp')) rmSync(join(SERVICE_OUT, name), { force: true });
}
const sources = [...Object.keys(metafile.inputs), relative(root, BUILD_SCRIPT)];
writeAtomically(SOURCES_FILE, JSON.stringify(Object.fromEntries(sources.map((path) => [path, contentHash(join(root, path))])), null, 1));

/** The service's configuration module, bundled whole in memory and run on `environment`. */
async function refuseBadConfiguration(environment) {
  const { outputFiles: [bundle] } = await build({
    absWorkingDir: root,
    entryPoints: ['adapters/config/config.ts'],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    logLevel: 'warning',
  });
  const { loadConfig, ConfigError } = await import(`data:text/javascript;base64,${Buffer.from(bundle.contents).toString('base64')}`);
  try {
    loadConfig(environment);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`configuration error: ${error.message}\n`);
    process.exit(CONFIGURATION_REFUSED);
  }
}
