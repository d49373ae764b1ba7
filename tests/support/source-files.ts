import { readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * No source, and written by other tests while these walks run: `npm pack` builds client/dist, the
 * generated-clients test installs tools' packages and generates clients into its work folder.
 */
const NOT_SOURCE = new Set(['dist', 'node_modules', 'work']);

/** The TypeScript files under `folder` (a path from the repository's root), as paths from the root, in order. */
export function typeScriptFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.split(sep).some((part) => NOT_SOURCE.has(part)))
    .map((file) => join(folder, file))
    .sort();
}
