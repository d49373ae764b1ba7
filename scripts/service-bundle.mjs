// Where `npm start`'s bundle lives, and whether it is current: every source the last build read
// (dist/sources.json, written by build-service.mjs) still has the contents it had then.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export const SERVICE_OUT = fileURLToPath(new URL('../dist', import.meta.url));
export const SOURCES_FILE = fileURLToPath(new URL('../dist/sources.json', import.meta.url));
export const BUILD_SCRIPT = fileURLToPath(new URL('build-service.mjs', import.meta.url));

/** build-service.mjs --check-configuration's exit code when the environment is refused (sysexits' EX_CONFIG). */
export const CONFIGURATION_REFUSED = 78;

export function contentHash(path) {
  return createHash('sha256').update(readFileSync(path)).digest('base64url');
}

/** True when dist/ was built from exactly the sources now on disk (its paths are the checkout's). */
export function bundleIsCurrent() {
  try {
    const sources = JSON.parse(readFileSync(SOURCES_FILE, 'utf8'));
    return Object.entries(sources).every(([path, hash]) => contentHash(join(root, path)) === hash);
  } catch {
    return false;
  }
}
