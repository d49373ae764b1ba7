import assert from 'node:assert/strict';
import { freePort } from '../../scripts/free-port.ts';
import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { seededRandom } from './seeded-random.ts';
import { distinctDeliveries } from './webhook-receiver.ts';
import type { ReceiverFault, WebhookReceiver } from './webhook-receiver.ts';

export const WEBHOOK_TEST_KEY = 'webhook-test-key-0123456789';
const headers = { authorization: `Bearer ${WEBHOOK_TEST_KEY}`, 'content-type': 'application/json' };
const ADDED = CLOUD_EVENT_TYPES.PetAdded;

/** A retry schedule of 30 waits from `firstMs`, doubling up to `capMs` (what the tests' receivers need to be retried often and never given up on). */
export function fastRetries(firstMs: number, capMs: number): string {
  return Array.from({ length: 30 }, (_, index) => `${Math.min(capMs, firstMs * 2 ** index)}ms`).join(',');
}

/** Fast retries and a short lease, so that a test sees many of each. */
export const FAST_WEBHOOKS = {
  PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true',
  PETSTORE_WEBHOOK_RETRY_SCHEDULE: fastRetries(20, 200),
  PETSTORE_WEBHOOK_TIMEOUT_MS: '300',
  PETSTORE_WEBHOOK_LEASE_MS: '1500',
};

/** A receiver that fails about a quarter of the requests: 5xx, a closed connection, or no answer. */
export function failingAtRandom(receiver: WebhookReceiver, seed: number): void {
  const random = seededRandom(seed);
  let first = true;
  receiver.faultFor = (): ReceiverFault => {
    // The first request always fails: on a loaded machine batches grow, and a few requests could all succeed.
    if (first) {
      first = false;
      return 'status-503';
    }
    const draw = random();
    return draw < 0.1 ? 'status-500' : draw < 0.15 ? 'status-503' : draw < 0.2 ? 'close' : draw < 0.23 ? 'timeout' : 'none';
  };
}

/**
 * Writes pets and status changes through `base` while `keepGoing()`, tolerating a service that went away;
 * paced (about 100 creations a second at most), so that delivery with faults can keep up on a slow runtime.
 */
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
      await new Promise((resolve) => setTimeout(resolve, 10));
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return written;
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


/**
 * Two services on one database (`common` names it; each gets its own port) and one subscription: while
 * both run and the receiver answers everything, no event arrives twice (one deliverer); then the lease
 * holder is killed, the receiver fails at random, and the other service delivers every event, in order.
 */
export async function checkTakeoverOnKill(
  common: Record<string, string>, leaseHolder: (id: string) => Promise<string>, receiver: WebhookReceiver, seed: number,
  start: (environment: Record<string, string>) => { listening: Promise<string>; child: { pid?: number | undefined }; signal(name: NodeJS.Signals): void; exited: Promise<unknown> },
): Promise<void> {
  const services = [start({ ...common, PORT: String(await freePort()) })];
  const bases = [await services[0]!.listening];
  services.push(start({ ...common, PORT: String(await freePort()) }));
  bases.push(await services[1]!.listening);

  const created = await fetch(`${bases[0]}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, types: [ADDED] }) });
  assert.equal(created.status, 201, await created.clone().text());
  const { id, secret } = (await created.json()) as { id: string; secret: string };
  receiver.secret = secret;

  // Both write; the receiver answers every request: a duplicate would mean a second deliverer.
  let writing = true;
  const writers = bases.map((base) => writeWhile(base, () => writing));
  await receiver.waitFor((received) => received.length >= 30, 60_000);
  assert.deepEqual(distinctDeliveries(receiver.acknowledged).positions, receiver.acknowledged.map((received) => received.position), 'one deliverer: no event twice, in order');

  // The lease holder is killed; the other takes over once the lease runs out.
  const holderPid = Number((await leaseHolder(id)).split('-')[0]);
  const holder = services.findIndex((service) => service.child.pid === holderPid);
  assert.ok(holder >= 0, `the lease holder (pid ${holderPid}) is one of the services`);
  failingAtRandom(receiver, seed);
  services[holder]!.signal('SIGKILL');
  await services[holder]!.exited;
  const survivor = bases[1 - holder]!;
  const before = distinctDeliveries(receiver.acknowledged).positions.length;
  await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= before + 20, 60_000);
  writing = false;
  await Promise.all(writers);

  const expected = await feedPositions(survivor, ADDED);
  await receiver.waitFor((received) => distinctDeliveries(received).positions.length >= expected.length, 120_000);
  assertDeliveredInOrder(receiver, expected, seed);
  assert.equal(Number((await leaseHolder(id)).split('-')[0]), services[1 - holder]!.child.pid, 'the survivor holds the lease now');
}
