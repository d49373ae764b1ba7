import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestService, TEST_API_KEY } from './support/test-service.ts';
import type { TestService } from './support/test-service.ts';

// The generators need TypeScript 5's compiler API (the project compiles with TypeScript 7), so they
// live in a package of their own, installed here from its lock file when it is not yet.
const tools = fileURLToPath(new URL('../tools/generated-clients/', import.meta.url));
const bin = (name: string) => join(tools, 'node_modules', '.bin', name);
const work = join(tools, 'work');
const run = promisify(execFile);

/** Runs a command; on failure, the assertion shows what it printed. */
async function succeed(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  try {
    const { stdout } = await run(command, args, { cwd: options.cwd ?? tools, env: options.env ?? process.env, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    assert.fail(`${command} ${args.join(' ')} exited ${failed.code}:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
  }
}

function installedIsCurrent(): boolean {
  const installed = join(tools, 'node_modules', '.package-lock.json');
  return existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(tools, 'package-lock.json')).mtimeMs;
}

let api: TestService;
let documentFile: string;

before(async () => {
  if (!installedIsCurrent()) await succeed('npm', ['ci', '--no-audit', '--no-fund']);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  api = await startTestService();
  const served = await fetch(`${api.baseUrl}/openapi.json`);
  assert.equal(served.status, 200);
  documentFile = join(work, 'openapi.json');
  writeFileSync(documentFile, await served.text());
});

after(async () => {
  await api?.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Generator {
  readonly name: string;
  readonly program: string;
  generate(directory: string, generated: string): Promise<unknown>;
}

const GENERATORS: readonly Generator[] = [
  {
    name: 'openapi-typescript + openapi-fetch',
    program: 'openapi-fetch.ts',
    generate: (_directory, generated) => succeed(bin('openapi-typescript'), [documentFile, '--output', join(generated, 'schema.d.ts'), '--default-non-nullable', 'false']),
  },
  {
    name: '@hey-api/openapi-ts',
    program: 'hey-api.ts',
    generate: (_directory, generated) => succeed(bin('openapi-ts'), ['--input', documentFile, '--output', generated]),
  },
  {
    name: 'orval (fetch client)',
    program: 'orval.ts',
    generate(directory, generated) {
      const config = join(directory, 'orval.config.mjs');
      // The address comes from the document's first server, as docs/client.md tells users to generate it.
      const output = { target: join(generated, 'petstore.ts'), client: 'fetch', baseUrl: { getBaseUrlFromSpecification: true } };
      writeFileSync(config, `export default ${JSON.stringify({ petstore: { input: { target: documentFile }, output } })};\n`);
      return succeed(bin('orval'), ['--config', config]);
    },
  },
];

describe('clients generated from the served OpenAPI document by third-party generators', () => {
  for (const generator of GENERATORS) {
    it(`${generator.name}: the generated client and a program using it pass tsc --strict, and the program runs against the service`, async () => {
      const directory = join(work, generator.program.replace(/\.ts$/, ''));
      const generated = join(directory, 'generated');
      mkdirSync(generated, { recursive: true });
      await generator.generate(directory, generated);
      assert.ok(readdirSync(generated).length > 0, 'the generator wrote files');
      for (const file of [generator.program, 'environment.ts']) copyFileSync(join(tools, 'programs', file), join(directory, file));
      writeFileSync(join(directory, 'tsconfig.json'), JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2023', 'dom', 'dom.iterable'],
          types: [],
          outDir: 'out',
          skipLibCheck: false,
          noEmitOnError: true,
        },
        include: ['*.ts', 'generated/**/*.ts'],
      }));
      await succeed(bin('tsc'), ['--project', join(directory, 'tsconfig.json')]);
      const program = join(directory, 'out', generator.program.replace(/\.ts$/, '.js'));
      await succeed(process.execPath, [program], { cwd: directory, env: { ...process.env, PETSTORE_BASE_URL: api.baseUrl, PETSTORE_API_KEY: TEST_API_KEY } });
    });
  }
});
