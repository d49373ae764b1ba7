import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openPetStore } from '../adapters/store/open-store.ts';
import { runPetstore } from './support/cli.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

const directory = temporaryDirectory('cli-webhooks-history');
const database = directory.file('petstore.db');
after(() => directory.remove());

const petstore = (args: string[], environment: Record<string, string> = {}) => runPetstore(args, { PETSTORE_DATABASE: database, ...environment });

describe('petstore webhooks attempts, replay and rotate-secret', () => {
  it('has each command with its own --help', async () => {
    const { stdout } = await petstore(['--help']);
    for (const command of ['webhooks attempts', 'webhooks replay', 'webhooks rotate-secret']) {
      assert.match(stdout, new RegExp(`^  ${command} `, 'm'));
      const help = await petstore([...command.split(' '), '--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`^petstore ${command}\\b`));
    }
  });

  it('shows the attempts newest first, replays from a position up to the log end, and prints a rotated secret once', async () => {
    const created = await petstore(['webhooks', 'create', '--key-id', '3', '--url', 'https://93.184.215.14/hook']);
    assert.equal(created.code, 0, created.stderr);
    const [id, secret] = created.stdout.trim().split(' ') as [string, string];
    assert.match((await petstore(['webhooks', 'attempts', id])).stdout, /^no attempts kept$/m);

    const store = await openPetStore({ kind: 'sqlite', path: database }, { migrate: false });
    try {
      const now = Date.now();
      await store.webhookSubscriptions.advance(id, { holder: 'nobody', replays: 0 }, 0, new Date(now), [
        { attemptedAt: new Date(now - 2000).toISOString(), messageId: `msg_${id}_4`, positions: [4], responseStatus: null, durationMs: 10000, error: 'no answer within 10000 ms' },
        { attemptedAt: new Date(now - 1000).toISOString(), messageId: `msg_${id}_4`, positions: [4], responseStatus: 204, durationMs: 12, error: null },
      ]);
    } finally {
      await store.close();
    }
    const shown = await petstore(['webhooks', 'attempts', id]);
    assert.equal(shown.code, 0, shown.stderr);
    const lines = shown.stdout.trim().split('\n');
    assert.match(lines[0]!, /^attempted at +webhook-id +positions +status +ms +error$/);
    assert.match(lines[1]!, new RegExp(`^\\S+ +msg_${id}_4 +4 +204 +12$`));
    assert.match(lines[2]!, new RegExp(`^\\S+ +msg_${id}_4 +4 +- +10000 +no answer within 10000 ms$`));
    assert.equal((await petstore(['webhooks', 'attempts', id, '--limit', '1'])).stdout.trim().split('\n').length, 2);
    assert.equal((await petstore(['webhooks', 'attempts', id, '--limit', '0'])).code, 2);
    assert.equal((await petstore(['webhooks', 'attempts', 'wh_none'])).code, 1);

    const past = await petstore(['webhooks', 'replay', id, '--after', '1']);
    assert.equal(past.code, 2, 'the log is empty: position 1 is past its end');
    assert.match(past.stderr, /past the end of the log/);
    assert.equal((await petstore(['webhooks', 'replay', id, '--after', '-1'])).code, 2);
    const replayed = await petstore(['webhooks', 'replay', id, '--after', '0']);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stdout, /^replaying webhook \S+ after log position 0: a running service starts within a third of PETSTORE_WEBHOOK_LEASE_MS \(10 s by default\)$/m);
    assert.equal((await petstore(['webhooks', 'replay', 'wh_none', '--after', '0'])).code, 1);

    const rotated = await petstore(['webhooks', 'rotate-secret', id], { PETSTORE_WEBHOOK_SECRET_OVERLAP_MS: '60000' });
    assert.equal(rotated.code, 0, rotated.stderr);
    const newSecret = rotated.stdout.trim();
    assert.match(newSecret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    assert.notEqual(newSecret, secret);
    assert.match(rotated.stderr, /the old one signs beside it until /);
    const reopened = await openPetStore({ kind: 'sqlite', path: database }, { migrate: false });
    try {
      const { secrets } = (await reopened.webhookSubscriptions.withSecret(id))!;
      assert.equal(secrets.current, newSecret);
      assert.equal(secrets.previous?.secret, secret);
      assert.ok(Math.abs(Date.parse(secrets.previous!.until) - Date.now() - 60_000) < 30_000);
    } finally {
      await reopened.close();
    }
    assert.equal((await petstore(['webhooks', 'rotate-secret', 'wh_none'])).code, 1);
  });
});
