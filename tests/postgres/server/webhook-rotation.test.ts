import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { createTestDatabase } from '../../support/postgres.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';
import { startWebhookReceiver } from '../../support/webhook-receiver.ts';
import type { ReceivedEvent } from '../../support/webhook-receiver.ts';
import { FAST_WEBHOOKS, WEBHOOK_TEST_KEY } from '../../support/webhook-load.ts';

const headers = { authorization: `Bearer ${WEBHOOK_TEST_KEY}`, 'content-type': 'application/json' };
const OVERLAP_MS = 4_000;

const verifies = (secret: string, { body, headers: sent }: ReceivedEvent) => {
  try {
    new Webhook(secret).verify(body, sent);
    return true;
  } catch {
    return false;
  }
};

describe('webhook secret rotation on PostgreSQL with two instances', () => {
  it('rotated through the instance that does not deliver: the delivering one signs with both secrets, then with the new one alone once the overlap ends', { timeout: 180_000 }, async () => {
    const database = await createTestDatabase();
    const receiver = await startWebhookReceiver();
    const services: ServiceProcess[] = [];
    const client = new pg.Client({ connectionString: database.url });
    try {
      await client.connect();
      const common = {
        PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: WEBHOOK_TEST_KEY, PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://petstore.test/v1',
        PETSTORE_WEBHOOK_SECRET_OVERLAP_MS: String(OVERLAP_MS), ...FAST_WEBHOOKS,
      };
      // One at a time: the second does not race the first's migrations.
      services.push(startServiceProcess(common));
      const first = await services[0]!.listening;
      services.push(startServiceProcess(common));
      const second = await services[1]!.listening;
      const bases = new Map([[services[0]!.child.pid!, first], [services[1]!.child.pid!, second]]);

      const created = await fetch(`${first}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url }) });
      assert.equal(created.status, 201);
      const { id, secret: oldSecret } = (await created.json()) as { id: string; secret: string };
      receiver.secret = oldSecret;
      const addPet = async (base: string) => assert.equal((await fetch(`${base}/pets`, { method: 'POST', headers, body: '{"name":"Rex","categoryId":1}' })).status, 201);
      await addPet(first);
      await receiver.waitFor((received) => received.length >= 1, 60_000);
      const holder = (await client.query<{ lease_holder: string | null }>('select lease_holder from webhooks where id = $1', [id])).rows[0]!.lease_holder;
      const deliveringPid = Number(holder?.split('-')[0]);
      assert.ok(bases.has(deliveringPid), `the lease is held by one of the two: ${holder}`);
      const other = [...bases].find(([pid]) => pid !== deliveringPid)![1];

      const rotated = await fetch(`${other}/webhooks/${id}/rotate-secret`, { method: 'POST', headers });
      assert.equal(rotated.status, 200);
      const { secret: newSecret } = (await rotated.json()) as { secret: string };
      receiver.secret = newSecret;
      // The delivering instance reads the secrets again when it renews its lease (a third of it): the new one signs soon.
      const seen = receiver.acknowledged.length;
      await addPet(other);
      await receiver.waitFor((received) => received.length > seen, 60_000);
      const during = receiver.acknowledged[seen]!;
      assert.equal(during.headers['webhook-signature']!.split(' ').length, 2, during.headers['webhook-signature']);
      assert.ok(verifies(newSecret, during) && verifies(oldSecret, during), 'a receiver knowing either secret verifies it');

      // Once the overlap is over, the replaced secret signs nothing more.
      let after: ReceivedEvent | undefined;
      const deadline = Date.now() + 60_000;
      while (after === undefined) {
        assert.ok(Date.now() < deadline, 'a delivery signed with the new secret alone within a minute');
        const count = receiver.acknowledged.length;
        await addPet(other);
        await receiver.waitFor((received) => received.length > count, 60_000);
        const last = receiver.acknowledged.at(-1)!;
        if (last.headers['webhook-signature']!.split(' ').length === 1) after = last;
        else await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.ok(verifies(newSecret, after));
      assert.ok(!verifies(oldSecret, after));

      // The attempt log, read through the other instance, as PostgreSQL gives it back: numbers, newest first.
      type Attempt = { id: unknown; positions: unknown[]; responseStatus: unknown; messageId: string };
      const readAttempts = async () => (await (await fetch(`${other}/webhooks/${id}/attempts?limit=2`, { headers })).json()) as Attempt[];
      // Written behind delivery, with the next stored position: ask again until the last one is there.
      let attempts = await readAttempts();
      for (let tries = 0; attempts[0]?.messageId !== after.webhookId && tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        attempts = await readAttempts();
      }
      assert.equal(attempts.length, 2);
      assert.ok(typeof attempts[0]!.id === 'number' && (attempts[0]!.id as number) > (attempts[1]!.id as number));
      assert.deepEqual([attempts[0]!.messageId, attempts[0]!.positions, attempts[0]!.responseStatus], [after.webhookId, [after.position], 204]);
    } finally {
      for (const service of services) service.cleanup();
      await client.end().catch(() => undefined);
      await receiver.close();
      await database.drop();
    }
  });
});
