import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { addPet, claimEvents } from '../application/index.ts';
import { openPetStore } from '../adapters/store/open-store.ts';
import { runPetstore } from './support/cli.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

const directory = temporaryDirectory('cli-groups');
const database = directory.file('petstore.db');
after(() => directory.remove());

const petstore = (args: string[]) => runPetstore(args, { PETSTORE_DATABASE: database });

describe('petstore groups', () => {
  it('has its five commands, each with its own --help', async () => {
    const { stdout } = await petstore(['--help']);
    for (const command of ['groups list', 'groups show', 'groups parked', 'groups replay', 'groups delete']) {
      assert.match(stdout, new RegExp(`^  ${command} `, 'm'));
      const help = await petstore([...command.split(' '), '--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`^petstore ${command}\\b`));
    }
  });

  it('list, show, parked, replay and delete a key\'s group', async () => {
    assert.equal((await petstore(['migrate'])).code, 0);
    assert.match((await petstore(['groups', 'list'])).stdout, /no consumer groups/);
    const store = await openPetStore({ kind: 'sqlite', path: database }, { migrate: false });
    try {
      const ports = { consumerGroups: store.consumerGroups, eventLog: store.eventLog, clock: store.clock };
      await ports.consumerGroups.create('7', 'billing', { ackTimeoutMs: 30_000, maxDeliveries: 5, start: 'beginning' }, 0, new Date(), 20);
      await addPet(store, { name: 'Parked', categoryId: 1 });
      await addPet(store, { name: 'Waiting', categoryId: 1 });
      const outcome = await claimEvents(ports, '7', 'billing', 'worker', 1);
      assert.ok(outcome && 'claims' in outcome);
      await ports.consumerGroups.group('7', 'billing').nack([outcome.claims[0]!.lease], new Date(), { park: true });
    } finally {
      await store.close();
    }
    assert.match((await petstore(['groups', 'list'])).stdout, /^7 +billing +1 +2 +1 +0 +1$/m);
    const shown = await petstore(['groups', 'show', '--key-id', '7', 'billing']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual((({ group, checkpoint, head, parked }) => ({ group, checkpoint, head, parked }))(JSON.parse(shown.stdout)), { group: 'billing', checkpoint: 1, head: 2, parked: 1 });
    const parked = (await petstore(['groups', 'parked', '--key-id', '7', 'billing'])).stdout;
    assert.match(parked, /^1 +1 +\S+ +parked by a nack on delivery 1$/m);
    // The page tells the same reason the service gives.
    assert.ok(readFileSync(new URL('../docs/consumer-groups.md', import.meta.url), 'utf8').replaceAll('\n  ', ' ').includes('`parked by a nack on delivery 1`'));
    assert.equal((await petstore(['groups', 'replay', '--key-id', '7', 'billing'])).stdout, 'handed back 1 parked event of billing\n');
    assert.match((await petstore(['groups', 'parked', '--key-id', '7', 'billing'])).stdout, /no parked events/);
    const other = await petstore(['groups', 'show', '--key-id', '8', 'billing']);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /no consumer group billing of key 8/);
    assert.equal((await petstore(['groups', 'delete', '--key-id', '7', 'billing'])).code, 0);
    assert.equal((await petstore(['groups', 'delete', '--key-id', '7', 'billing'])).code, 1);
    assert.equal((await petstore(['groups', 'show', 'billing'])).code, 2, '--key-id is required');
  });
});
