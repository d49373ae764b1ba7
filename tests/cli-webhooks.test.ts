import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLOUD_EVENT_TYPES } from '../contract/event-feed.ts';
import { runPetstore } from './support/cli.ts';
import { temporaryDirectory } from './support/temporary-store.ts';
import { openSqlPetStore } from '../adapters/store/open-store.ts';

const directory = temporaryDirectory('cli-webhooks');
const database = directory.file('petstore.db');
after(() => directory.remove());

const petstore = (args: string[], environment: Record<string, string> = {}) => runPetstore(args, { PETSTORE_DATABASE: database, ...environment });

describe('petstore webhooks', () => {
  it('has its four commands, each with its own --help', async () => {
    const { stdout } = await petstore(['--help']);
    for (const command of ['webhooks list', 'webhooks create', 'webhooks delete', 'webhooks resume']) {
      assert.match(stdout, new RegExp(`^  ${command} `, 'm'));
      const help = await petstore([...command.split(' '), '--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`^petstore ${command}\\b`));
    }
  });

  it('create prints id and secret once; list shows it without the secret; resume and delete by id', async () => {
    assert.equal((await petstore(['migrate'])).code, 0);
    assert.match((await petstore(['webhooks', 'list'])).stdout, /no webhook subscriptions/);
    const created = await petstore(['webhooks', 'create', '--key-id', '3', '--url', 'https://93.184.215.14/hook', '--type', CLOUD_EVENT_TYPES.PetAdded]);
    assert.equal(created.code, 0, created.stderr);
    const [id, secret] = created.stdout.trim().split(' ');
    assert.match(id!, /^wh_/);
    assert.match(secret!, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const listed = await petstore(['webhooks', 'list']);
    assert.match(listed.stdout, new RegExp(`^${id} +3 +active +0 +0 +https://93\\.184\\.215\\.14/hook +${CLOUD_EVENT_TYPES.PetAdded.replace(/\./g, '\\.')}$`, 'm'));
    assert.ok(!listed.stdout.includes(secret!));
    assert.equal((await petstore(['webhooks', 'resume', id!])).code, 0);
    assert.equal((await petstore(['webhooks', 'delete', id!])).code, 0);
    const again = await petstore(['webhooks', 'delete', id!]);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, `petstore: no webhook ${id}\n`);
    // Every command that names a subscription says so alike.
    for (const command of [['resume'], ['attempts'], ['replay', '--after', '0'], ['rotate-secret']]) {
      const refused = await petstore(['webhooks', command[0]!, 'wh_none', ...command.slice(1)]);
      assert.deepEqual([refused.code, refused.stderr], [1, 'petstore: no webhook wh_none\n'], command[0]);
    }
  });

  it('refuses a private target (unless allowed), a bad key id or type, with exit 2', async () => {
    const refused = await petstore(['webhooks', 'create', '--key-id', '1', '--url', 'http://localhost:8080/hook']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /url must reach a public address; localhost \(\S+\) is loopback, private, link-local or reserved \(PETSTORE_WEBHOOKS_ALLOW_PRIVATE=true in this command's environment allows it, and the service delivering it needs the same setting, for development\)/);
    assert.doesNotMatch(refused.stderr, /a service started with/);
    const allowed = await petstore(['webhooks', 'create', '--key-id', '1', '--url', 'http://127.0.0.1:8080/hook'], { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal((await petstore(['webhooks', 'create', '--key-id', 'x', '--url', 'https://93.184.215.14/'])).code, 2);
    assert.equal((await petstore(['webhooks', 'create', '--key-id', '1', '--url', 'https://93.184.215.14/', '--type', 'nope'])).code, 2);
    assert.equal((await petstore(['webhooks', 'create', '--key-id', '1', '--url', 'https://93.184.215.14/', '--batch-size', '101'])).code, 2);
    assert.equal((await petstore(['webhooks', 'create', '--key-id', '1', '--url', 'https://93.184.215.14/', '--batch-size', '20'])).code, 0);
    assert.equal((await petstore(['webhooks', 'create', '--key-id', '1', '--url', 'https://93.184.215.14/', '--max-per-second', '0'])).code, 2);
    assert.equal((await petstore(['webhooks', 'create', '--key-id', '1', '--url', 'https://93.184.215.14/', '--max-per-second', '1001'])).code, 2);
  });

  it('list --status shows only the failing or disabled subscriptions, with why the last attempt failed; create takes --max-per-second', async () => {
    const listing = directory.file('status.db');
    const run = (args: string[]) => runPetstore(args, { PETSTORE_DATABASE: listing });
    const created = await run(['webhooks', 'create', '--key-id', '4', '--url', 'https://93.184.215.14/slow', '--max-per-second', '3']);
    assert.equal(created.code, 0, created.stderr);
    const [id] = created.stdout.trim().split(' ');
    const store = await openSqlPetStore({ kind: 'sqlite', path: listing }, { migrate: false });
    try {
      const row = await store.db.selectFrom('webhooks').select('max_per_second').where('id', '=', id!).executeTakeFirstOrThrow();
      assert.equal(row.max_per_second, 3);
      await store.db.updateTable('webhooks').set({ status: 'failing', attempts: 10, last_error: 'answered 500: down' }).where('id', '=', id!).execute();
    } finally {
      await store.close();
    }
    assert.equal((await run(['webhooks', 'create', '--key-id', '4', '--url', 'https://93.184.215.14/fine'])).code, 0);
    const failing = await run(['webhooks', 'list', '--status', 'failing']);
    assert.equal(failing.code, 0, failing.stderr);
    assert.deepEqual(failing.stdout.trim().split('\n').slice(1).map((line) => line.split(/ +/)[0]), [id]);
    assert.match(failing.stdout, /answered 500: down$/m);
    assert.match((await run(['webhooks', 'list', '--status', 'disabled'])).stdout, /no disabled webhook subscriptions/);
    assert.equal((await run(['webhooks', 'list', '--status', 'broken'])).code, 2);
  });
});
