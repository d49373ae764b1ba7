#!/usr/bin/env node
// Builds the service for `npm start`: adapters/main.ts and what it imports, types stripped, bundled
// into dist/ (packages stay in node_modules). Plain Node then runs JavaScript: no TypeScript loader
// and its second V8 heap in the serving process. The PostgreSQL driver and the metrics registry are
// separate chunks, loaded only when the configuration asks for them.
// Each file is written under a temporary name and renamed, so services starting together, each
// building first, never read a file half written.
import { readdirSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const SERVICE_OUT = join(root, 'dist');

const { outputFiles } = await build({
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
  logLevel: 'warning',
});
mkdirSync(SERVICE_OUT, { recursive: true });
for (const file of outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  const temporary = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temporary, file.contents);
  renameSync(temporary, file.path);
}
// Chunks of earlier builds (their names carry a hash of their contents) are no longer imported.
const current = new Set(outputFiles.map((file) => basename(file.path)));
for (const name of readdirSync(SERVICE_OUT)) {
  if (!current.has(name) && !name.endsWith('.tmp')) rmSync(join(SERVICE_OUT, name), { force: true });
}
