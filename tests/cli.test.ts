import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { sha256Hex } from '../adapters/api-keys/key-verifier.ts';
import { buildOpenApiDocument } from '../contract/openapi-document.ts';
import { openSqlite } from '../adapters/store/sqlite/open-sqlite.ts';
import { petstoreCommandLine, runPetstore } from './support/cli.ts';
import { temporaryDirectory } from './support/temporary-store.ts';
import type { TemporaryDirectory } from './support/temporary-store.ts';
import { startTestService } from './support/test-service.ts';

let directory: TemporaryDirectory;
let database: string;

before(() => {
  directory = temporaryDirectory('cli');
  database = directory.file('petstore.db');
});

after(() => directory.remove());

const petstore = (...args: string[]) => runPetstore(args, { PETSTORE_DATABASE: database });

describe('petstore --help', () => {
  const commands = ['serve', 'migrate', 'openapi', 'backup', 'keys create', 'keys list', 'keys revoke', 'projection rebuild', 'projection verify'];

  it('lists every command', async () => {
    const { code, stdout } = await petstore('--help');
    assert.equal(code, 0);
    for (const command of commands) assert.match(stdout, new RegExp(`^  ${command} `, 'm'));
  });

  it('gives each command its own --help, exit 0', async () => {
    const answers = await Promise.all(commands.map((command) => petstore(...command.split(' '), '--help')));
    answers.forEach(({ code, stdout }, index) => {
      assert.equal(code, 0, commands[index]);
      assert.match(stdout, new RegExp(`^petstore ${commands[index]}\\b`), commands[index]);
    });
  });

  it('exits 2 with the group\'s commands for `keys` alone, and with the usage for an unknown subcommand', async () => {
    const alone = await petstore('keys');
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /keys <create\|list\|revoke>/);
    const unknown = await petstore('keys', 'rotate');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^petstore: unknown command: keys rotate\n\nusage: petstore keys <create\|list\|revoke>/);
  });

  it('prints its version for --version and -v, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) assert.deepEqual(await petstore(flag), { code: 0, stdout: `petstore ${version}\n`, stderr: '' });
  });

  const nearMisses: Array<[typed: string[], meant: string]> = [
    [['keys', 'delete', '1'], 'petstore keys revoke 1'],
    [['keys', 'remove', '3'], 'petstore keys revoke 3'],
    [['migrat'], 'petstore migrate'],
    [['kyes', 'list'], 'petstore keys list'],
    [['projection', 'verfy'], 'petstore projection verify'],
  ];
  for (const [typed, meant] of nearMisses) {
    it(`asks "did you mean \`${meant}\`?" for \`${typed.join(' ')}\`, exit 2`, async () => {
      const { code, stderr } = await petstore(...typed);
      assert.equal(code, 2);
      assert.ok(stderr.startsWith(`petstore: unknown command: ${typed.join(' ')}; did you mean \`${meant}\`?\n`), stderr);
    });
  }

  it('suggests nothing for a command that is near none', async () => {
    const { code, stderr } = await petstore('frobnicate');
    assert.equal(code, 2);
    assert.match(stderr, /^petstore: unknown command: frobnicate\n\nusage: petstore <command>/);
  });
});

describe('petstore as a pipe\'s writer', () => {
  it('exits 0 without a word when its reader closes the pipe early (petstore openapi | head -1)', async () => {
    const [program, args] = petstoreCommandLine(['openapi']);
    // A shell's pipe, as a person types it: the document is larger than the pipe holds, so head leaves while petstore still writes.
    const child = spawn('bash', ['-c', 'set -o pipefail; "$@" | head -1', 'bash', program, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    assert.equal(stderr, '');
    assert.equal(stdout, '{\n');
    assert.equal(code, 0);
  });
});

describe('commands that only read', () => {
  const readers = [['keys', 'list'], ['keys', 'revoke', '1'], ['projection', 'verify'], ['projection', 'rebuild'], ['events', 'tail'], ['check'], ['webhooks', 'list'], ['webhooks', 'attempts', 'wh_x'], ['webhooks', 'delete', 'wh_x'], ['webhooks', 'resume', 'wh_x'], ['webhooks', 'replay', 'wh_x', '--after', '0'], ['webhooks', 'rotate-secret', 'wh_x']];
  for (const args of readers) {
    it(`\`${args.join(' ')}\` in an empty folder exits 1 naming the missing database, and creates none`, async () => {
      const empty = temporaryDirectory('cli-empty');
      try {
        const environment = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('PETSTORE_')).map((name) => [name, '']));
        const { code, stderr } = await runPetstore(args, environment, { cwd: empty.path });
        assert.equal(code, 1);
        assert.match(stderr, /^petstore: the database \.\/data\/petstore\.db \(PETSTORE_DATABASE\) does not exist: /);
        assert.deepEqual(readdirSync(empty.path), []);
      } finally {
        empty.remove();
      }
    });
  }
});

describe('petstore and an unreachable PostgreSQL', () => {
  it('exits 1 naming PETSTORE_DATABASE without its password and the reason, without a stack', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const { code, stdout, stderr } = await runPetstore(['keys', 'list'], { PETSTORE_DATABASE: `postgres://petstore:hunter2@127.0.0.1:${port}/petstore` });
    assert.equal(code, 1);
    assert.equal(stderr, `petstore: cannot reach PostgreSQL at postgres://petstore:***@127.0.0.1:${port}/petstore (PETSTORE_DATABASE): connect ECONNREFUSED 127.0.0.1:${port}\n`);
    assert.doesNotMatch(stdout, /hunter2/);
  });
});

describe('petstore openapi', () => {
  it('prints the document the service serves, with production and staging from the configuration', async () => {
    const { code, stdout } = await runPetstore(['openapi'], {
      PETSTORE_ENV: 'production',
      PETSTORE_PRODUCTION_URL: 'https://api.example.com/v1',
      PETSTORE_STAGING_URL: 'https://staging.example.com/v1',
    });
    assert.equal(code, 0);
    const document = JSON.parse(stdout) as Record<string, unknown>;
    assert.deepEqual(document, buildOpenApiDocument([
      { url: 'https://api.example.com/v1', description: 'production' },
      { url: 'https://staging.example.com/v1', description: 'staging' },
    ]));
    assert.equal((await new Validator().validate(document)).valid, true);
    assert.equal(existsSync(database), false, 'needs no database');
  });

  it('exits 1 naming the variable when the configuration is wrong', async () => {
    const { code, stderr } = await runPetstore(['openapi'], { PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: '' });
    assert.equal(code, 1);
    assert.match(stderr, /configuration error: PETSTORE_PRODUCTION_URL/);
  });
});

describe('petstore keys', () => {
  let created: { id: number; key: string };

  it('create prints the new key alone on standard output and stores only its hash', async () => {
    const { code, stdout, stderr } = await petstore('keys', 'create', '--label', 'ci runner');
    assert.equal(code, 0);
    const key = stdout.trim();
    assert.match(key, /^ps_[A-Za-z0-9_-]{43}$/);
    const id = Number(/created key (\d+) \(ci runner\)/.exec(stderr)?.[1]);
    assert.ok(id > 0, stderr);
    created = { id, key };
    const { db } = await openSqlite(database, { migrate: false });
    try {
      const rows = await db.selectFrom('api_keys').selectAll().execute();
      assert.deepEqual(rows.map((row) => [row.id, row.key_hash, row.label]), [[id, sha256Hex(key), 'ci runner']]);
    } finally {
      await db.destroy();
    }
    for (const file of [database, `${database}-wal`].filter(existsSync)) assert.ok(!readFileSync(file).includes(key), `${file} holds the key`);
  });

  it('list shows id, state and label, never a key', async () => {
    await petstore('keys', 'create');
    const { code, stdout } = await petstore('keys', 'list');
    assert.equal(code, 0);
    assert.match(stdout, /^id +state +created +revoked +label$/m);
    assert.match(stdout, new RegExp(`^${created.id} +active +\\S+ +- +ci runner$`, 'm'));
    assert.ok(!stdout.includes(created.key));
  });

  it('revoke marks the key revoked, exit 0; again, or an unknown id, exits 1 saying why', async () => {
    const revoked = await petstore('keys', 'revoke', String(created.id));
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match((await petstore('keys', 'list')).stdout, new RegExp(`^${created.id} +revoked `, 'm'));
    const again = await petstore('keys', 'revoke', String(created.id));
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already revoked/);
    const unknown = await petstore('keys', 'revoke', '999');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /there is no key 999/);
  });

  for (const args of [['keys', 'revoke'], ['keys', 'revoke', 'abc'], ['keys', 'revoke', '1', '2'], ['keys', 'create', '--bogus'], ['keys', 'create', '--label', ''], ['keys', 'list', 'extra']]) {
    it(`refuses \`${args.join(' ')}\` with exit 2 and the command's help`, async () => {
      const { code, stderr } = await petstore(...args);
      assert.equal(code, 2);
      assert.match(stderr, new RegExp(`^petstore: .+\\n\\npetstore ${args[0]} ${args[1]}`));
    });
  }

  it('a key created and then revoked by the CLI is accepted, then refused, by a running service', async () => {
    const api = await startTestService({ PETSTORE_DATABASE: database });
    try {
      const { stdout } = await petstore('keys', 'create', '--label', 'live');
      const key = stdout.trim();
      assert.equal(await statusOnceSettled(() => api.request('/v1/pets', { key }), 200), 200);
      const id = /^(\d+) +active .* live$/m.exec((await petstore('keys', 'list')).stdout)?.[1];
      assert.equal((await petstore('keys', 'revoke', id!)).code, 0);
      assert.equal(await statusOnceSettled(() => api.request('/v1/pets', { key }), 401), 401);
    } finally {
      await api.stop();
    }
  });
});

/**
 * Another process's change reaches the service within a second (its key table refresh); there is no
 * event to wait on across processes, so ask again until the answer is `wanted` or 3 s have passed.
 */
async function statusOnceSettled(send: () => Promise<Response>, wanted: number): Promise<number> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const { status } = await send();
    if (status === wanted || Date.now() > deadline) return status;
    await delay(50);
  }
}

describe('docs/operations.md and the command', () => {
  it('lists in its table every command that petstore --help lists, and no other', async () => {
    const { stdout } = await petstore('--help');
    const helped = [...stdout.matchAll(/^ {2}([a-z]+(?: [a-z-]+)?) {2,}/gm)].map((match) => match[1]!).sort();
    const page = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    const table = page.slice(page.indexOf('## The `petstore` command'));
    const documented = [...table.matchAll(/^\| `([a-z]+(?: [a-z-]+)?)[ `]/gm)].map((match) => match[1]!).sort();
    assert.ok(helped.length >= 10, stdout);
    assert.deepEqual(documented, helped);
  });

  it('says the same as the page about what npm start runs', async () => {
    const { stdout } = await petstore('serve', '--help');
    assert.match(stdout, /npm start serves the same\nservice bundled into dist\//);
    const page = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    assert.match(page, /^\| `serve` \| runs the service from the TypeScript sources through tsx; `npm start` runs the same service bundled into `dist\/`/m);
  });
});
