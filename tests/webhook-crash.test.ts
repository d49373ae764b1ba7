import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLOUD_EVENT_TYPES } from '../contract/event-feed.ts';
import { seededRandom, seedFrom } from './support/seeded-random.ts';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { temporaryDirectory } from './support/temporary-store.ts';
import { distinctDeliveries, startWebhookReceiver } from './support/webhook-receiver.ts';
import type { ReceiverFault, WebhookReceiver } from './support/webhook-receiver.ts';

const KEY = 'webhook-crash-key-0123456789';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const ADDED = CLOUD_EVENT_TYPES.PetAdded;

/** Fast retries and a short lease, so that a test sees many of each. */
export const FAST_WEBHOOKS = {
  PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true',
  PETSTORE_WEBHOOK_RETRY_BASE_MS: '20',
  PETSTORE_WEBHOOK_RETRY_CAP_MS: '200',
  PETSTORE_WEBHOOK_TIMEOUT_MS: '300',
  PETSTORE_WEBHOOK_LEASE_MS: '1500',
};

/** A receiver that fails about a quarter of the requests: 5xx, a closed connection, or no answer. */
export function failingAtRandom(receiver: WebhookReceiver, seed: number): void {
  const random = seededRandom(seed);
  receiver.faultFor = (): ReceiverFault => {
    const draw = random();
    return draw < 0.1 ? 'status-500' : draw < 0.15 ? 'status-503' : draw < 0.2 ? 'close' : draw < 0.23 ? 'timeout' : 'none';
  };
}

/** Writes pets and status changes through `base` while `keepGoing()`, tolerating a service that went away. */
export async function writeWhile(base: string | (() => string), keepGoing: () => boolean): Promise<number> {
  let written = 0;
  while (keepGoing()) {
    const at = typeof base === 'string' ? base : base();
    try {
      const created = await fetch(`${at}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: `pet ${written}`, categoryId: 1 }) });
      if (created.status === 201) {
        written++;
        const { id } = (await created.json()) as { id: number };
        if (written % 3 === 0) await fetch(`${at}/pets/${id}`, { method: 'PATCH', headers, body: '{"status":"sold"}' });
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return written;
}

/** A port free now: a restarted service keeps its address, so each event's `source` (and so a re-delivered body) stays the same. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The positions of every event of `type` in the log, read from the feed. */
export async function feedPositions(base: string, type: string): Promise<number[]> {
  const positions: number[] = [];
  for (;;) {
    const page = (await (await fetch(`${base}/events?type=${type}&limit=1000&after=${positions.at(-1) ?? 0}`, { headers })).json()) as { id: string }[];
    positions.push(...page.map((event) => Number(event.id)));
    if (page.length < 1000) return positions;
  }
}

/** Every event of the feed's positions reached the receiver, first receipts in log order, re-deliveries with the same id and body. */
export function assertDeliveredInOrder(receiver: WebhookReceiver, expected: readonly number[], seed: number): void {
  const { positions, idMismatches } = distinctDeliveries(receiver.acknowledged);
  assert.deepEqual(receiver.badSignatures, [], `seed ${seed}`);
  assert.deepEqual(idMismatches, [], `seed ${seed}: a re-delivery with another webhook-id or body`);
  assert.deepEqual(positions, expected, `seed ${seed}: every event of the subscribed type, in log order, nothing missing`);
  assert.ok(receiver.acknowledged.every((received) => received.type === ADDED));
}

describe('webhooks across a crash (SIGKILL) of the service', () => {
  it('a receiver failing at random and stopped for a while ends with every event of its type, in order, while writers ran', { timeout: 180_000 }, async () => {
    const seed = seedFrom('WEBHOOK_SEED');
    const directory = temporaryDirectory('webhook-crash');
    const environment = { PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY, PORT: String(await freePort()), ...FAST_WEBHOOKS };
    const receiver = await startWebhookReceiver();
    failingAtRandom(receiver, seed);
    const services: ServiceProcess[] = [];
    try {
      services.push(startServiceProcess(environment));
      let base = await services[0]!.listening;
      const created = await fetch(`${base}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, types: [ADDED] }) });
      assert.equal(created.status, 201);
      receiver.secret = ((await created.json()) as { secret: string }).secret;

      let writing = true;
      const writers = [writeWhile(() => base, () => writing), writeWhile(() => base, () => writing)];
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= 30, 60_000);
      services[0]!.signal('SIGKILL');
      await services[0]!.exited;
      // The receiver goes away too, while the service comes back and the writers go on.
      await receiver.stop();
      services.push(startServiceProcess(environment));
      base = await services[1]!.listening;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await receiver.start();
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= 60, 60_000);
      writing = false;
      const written = (await Promise.all(writers)).reduce((sum, count) => sum + count, 0);
      assert.ok(written >= 60, `${written} pets written`);

      const expected = await feedPositions(base, ADDED);
      await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= expected.length, 60_000);
      assertDeliveredInOrder(receiver, expected, seed);
      assert.ok(receiver.faulted > 0, 'the receiver failed some requests');
    } finally {
      for (const service of services) service.cleanup();
      await receiver.close();
      directory.remove();
    }
  });
});
