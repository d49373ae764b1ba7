import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { temporaryDirectory } from './temporary-store.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const PACK_LOCK = join(tmpdir(), `petstore-client-pack-${createHash('sha256').update(root).digest('hex').slice(0, 12)}.lock`);

/** A user's project, outside the repository, with the client installed from the tarball `npm pack` made. */
export interface ClientProject {
  /** The project's folder (its package.json, node_modules, and the files a test writes). */
  readonly path: string;
  /** The tarball `npm pack` made in client/. */
  readonly tarball: string;
  /** Its size in bytes. */
  readonly tarballBytes: number;
  file(name: string): string;
  remove(): void;
}

/**
 * The environment a user's shell has: npm's own variables (set when this runs under `npm test`) are
 * left out, so that npm in the project knows nothing of this repository.
 */
export function userEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))), ...extra };
}

/**
 * Does what the README tells a user: `npm pack` in client/, then in a fresh project in the system's
 * temporary folder `npm init -y`, `npm pkg set type=module` and `npm install` of the tarball, offline
 * (the tarball has no dependencies).
 */
export async function installPackedClient(): Promise<ClientProject> {
  const folder = temporaryDirectory('client-user');
  try {
    const environment = userEnvironment();
    // npm pack builds into client/dist and removes it afterwards: test files packing side by side take turns.
    const packed = await run('flock', [PACK_LOCK, 'npm', 'pack', '--json', '--pack-destination', folder.path], { cwd: join(root, 'client'), env: environment });
    const [{ filename, size }] = JSON.parse(packed.stdout) as [{ filename: string; size: number }];
    const tarball = folder.file(filename);
    const project = folder.file('project');
    mkdirSync(project);
    await run('npm', ['init', '-y'], { cwd: project, env: environment });
    await run('npm', ['pkg', 'set', 'type=module'], { cwd: project, env: environment });
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project, env: environment });
    return { path: project, tarball, tarballBytes: size, file: (name) => join(project, name), remove: folder.remove };
  } catch (error) {
    folder.remove();
    throw error;
  }
}

/**
 * Type-checks the project's TypeScript with its own `tsc`, under the tsconfig docs/client.md shows
 * (strict, NodeNext, ES2022, Node's types, as `npm install -D @types/node` would give them); answers
 * what tsc printed, empty when it found nothing.
 */
export async function typeCheckProject(project: ClientProject): Promise<string> {
  writeFileSync(project.file('tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true,
      types: ['node'], typeRoots: [join(root, 'node_modules', '@types')],
    },
  }));
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  const node = process.versions.deno === undefined ? process.execPath : 'node';
  return run(node, [tsc, '-p', '.'], { cwd: project.path, env: userEnvironment() }).then(({ stdout }) => stdout, (error: { stdout: string }) => error.stdout);
}
