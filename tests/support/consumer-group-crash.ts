import assert from 'node:assert/strict';
import { startServiceProcess } from './service-process.ts';
import type { ServiceProcess } from './service-process.ts';

export const GROUP_TEST_KEY = 'group-test-key-0123456789';
const headers = { authorization: `Bearer ${GROUP_TEST_KEY}`, 'content-type': 'application/json' };

interface GroupState {
  readonly checkpoint: number;
  readonly head: number;
  readonly inFlight: number;
  readonly parked: number;
}

async function post(base: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}/consumer-groups/${path}`, { method: 'POST', headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
}

async function groupState(base: string, group: string, signal?: AbortSignal): Promise<GroupState> {
  const response = await fetch(`${base}/consumer-groups/${group}`, { headers, ...(signal ? { signal } : {}) });
  assert.equal(response.status, 200);
  return (await response.json()) as GroupState;
}

/**
 * Two service processes on one database (`environment` names it); a group with a short ack timeout; pets
 * written; four consumers, two on each process, claiming and acking. The first process is killed with
 * SIGKILL partway, its consumers' claims in flight with it: they go on through the second. An ack sent to
 * the killed process whose answer never came may or may not have committed: it counts as "maybe acked".
 * The consumers stop once the group's checkpoint reaches the head. Then every event was acked exactly
 * once or maybe acked (no ack of an event came back `acked` twice, none is missing), no pet's events were
 * handed out out of order, and the checkpoint never went down across the kill. Every loop ends when this
 * check ends, however it ends, or when `signal` aborts (the test's own end).
 */
export async function checkGroupAcrossKill(environment: Record<string, string>, options: { pets?: number; signal?: AbortSignal } = {}): Promise<void> {
  const pets = options.pets ?? 80;
  const services: ServiceProcess[] = [];
  const ended = new AbortController();
  const end = () => ended.abort();
  options.signal?.addEventListener('abort', end, { once: true });
  const { signal } = ended;
  try {
    const common = { PETSTORE_API_KEYS: GROUP_TEST_KEY, ...environment };
    services.push(startServiceProcess(common));
    const first = await services[0]!.listening;
    services.push(startServiceProcess(common));
    const second = await services[1]!.listening;
    const created = await fetch(`${first}/consumer-groups/crash`, { method: 'PUT', headers, body: JSON.stringify({ ackTimeoutMs: 1000 }) });
    assert.equal(created.status, 201);
    // Two events a pet, added and sold, so that per-pet order has something to hold.
    for (let index = 0; index < pets; index++) {
      const base = index % 2 ? first : second;
      const response = await fetch(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: `Crash ${index}`, categoryId: 1, status: 'available' }) });
      assert.equal(response.status, 201);
      const { id } = (await response.json()) as { id: number };
      assert.equal((await fetch(`${base}/pets/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ status: 'sold' }) })).status, 200);
    }
    const head = (await groupState(second, 'crash')).head;
    assert.equal(head, 2 * pets);

    const ackedOnce = new Map<number, number>();
    /** Positions whose ack was sent but never answered: committed or not, nobody can tell. */
    const maybeAcked = new Set<number>();
    /** Positions whose ack was sent, by pet: a later event of the pet may be handed out only once every earlier one's was. */
    const ackSent = new Map<string, Set<number>>();
    const handedOut = new Map<string, Set<number>>();
    let firstAlive = true;
    let killedAfter = Infinity;
    /** Set once a consumer saw the checkpoint at the head: every event is settled, the consumers stop. */
    let drained = false;
    /** While set, the consumers start no new claim. */
    let paused: Promise<void> | undefined;
    const consumer = async (name: string, onFirst: boolean) => {
      while (!drained && !signal.aborted) {
        await paused;
        const base = onFirst && firstAlive ? first : second;
        let claims: { lease: string; position: number; event: { subject: string } }[];
        try {
          const response = await post(base, 'crash/claims', { consumer: name, max: 4, waitMs: 200 }, signal);
          assert.equal(response.status, 200, await response.clone().text());
          claims = ((await response.json()) as { claims: typeof claims }).claims;
        } catch (error) {
          if (signal.aborted) return;
          if (base === first && !firstAlive) continue;
          throw error;
        }
        for (const claim of claims) {
          const seen = handedOut.get(claim.event.subject) ?? new Set<number>();
          const sent = ackSent.get(claim.event.subject) ?? new Set<number>();
          for (const earlier of seen) if (earlier < claim.position) assert.ok(sent.has(earlier), `${claim.event.subject}: ${claim.position} handed out before ${earlier} was acked`);
          handedOut.set(claim.event.subject, seen.add(claim.position));
        }
        if (claims.length === 0) {
          // Nothing to hand out: done once every event is settled (what a lost ack answer settled included).
          const state = await groupState(second, 'crash', signal).catch((error: unknown) => {
            if (signal.aborted) return undefined;
            throw error;
          });
          if (state && state.checkpoint >= head) drained = true;
          continue;
        }
        if (base === first && ackedOnce.size >= killedAfter) continue; // claimed just before the kill: never acked, its leases expire
        for (const claim of claims) ackSent.set(claim.event.subject, (ackSent.get(claim.event.subject) ?? new Set<number>()).add(claim.position));
        const response = await post(base, 'crash/acks', { leases: claims.map((claim) => claim.lease) }, signal).catch(() => undefined);
        if (!response) {
          if (signal.aborted) return;
          for (const claim of claims) maybeAcked.add(claim.position);
          continue;
        }
        assert.equal(response.status, 200, `${base === first ? 'first' : 'second'}: ${await response.clone().text()}`);
        const { acked, stale } = (await response.json()) as { acked: number; stale: string[] };
        for (const claim of claims) {
          if (stale.includes(claim.lease)) continue;
          ackedOnce.set(claim.position, (ackedOnce.get(claim.position) ?? 0) + 1);
        }
        assert.equal(acked + stale.length, claims.length);
      }
    };
    const consumers = Promise.all([consumer('a1', true), consumer('a2', true), consumer('b1', false), consumer('b2', false)]);
    // If one consumer fails, the others stop with it rather than run on.
    consumers.catch(end);
    // Partway, the first process dies with whatever its consumers hold.
    while (ackedOnce.size < head / 3 && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 20));
    if (signal.aborted) {
      await consumers; // a consumer's failure is this check's
      throw new Error('stopped before the kill');
    }
    const checkpointBefore = (await groupState(second, 'crash')).checkpoint;
    // What dies with it for sure: a consumer's claims, never acked, handed out again once their leases expire.
    // The others start no claim meanwhile: waiting for the database's lock, it could find them done with every event.
    let resume = () => {};
    paused = new Promise((resolve) => (resume = resolve));
    const doomed = await post(first, 'crash/claims', { consumer: 'doomed', max: 4 });
    const doomedClaims = ((await doomed.json()) as { claims: unknown[] }).claims.length;
    paused = undefined;
    resume();
    assert.equal(doomedClaims, 4);
    killedAfter = ackedOnce.size;
    firstAlive = false;
    services[0]!.signal('SIGKILL');
    await services[0]!.exited;
    assert.ok((await groupState(second, 'crash')).checkpoint >= checkpointBefore, 'the checkpoint survives the kill');
    await consumers;
    assert.ok(drained, 'the consumers stopped before the group was drained');

    const settled = new Set([...ackedOnce.keys(), ...maybeAcked]);
    assert.deepEqual([...settled].sort((a, b) => a - b), Array.from({ length: head }, (_, index) => index + 1), 'every event acked');
    assert.deepEqual([...ackedOnce.values()].filter((count) => count !== 1), [], 'none acked twice');
    const last = await groupState(second, 'crash');
    assert.deepEqual([last.checkpoint, last.inFlight, last.parked], [head, 0, 0]);
  } finally {
    ended.abort();
    options.signal?.removeEventListener('abort', end);
    for (const service of services) service.cleanup();
  }
}
