import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';

/** Builds small histories by hand, for the checker's tests: each operation completes before the next one starts. */

const SOURCE = 'http://history.test/v1';

export type Served = Record<string, unknown>;

export function added(position: number, id: number, name: string, categoryId: number, status: string | null): Served {
  return event(position, id, CLOUD_EVENT_TYPES.PetAdded, { id, name, categoryId, status });
}

export function changed(position: number, id: number, from: string | null, to: string): Served {
  return event(position, id, CLOUD_EVENT_TYPES.PetStatusChanged, { id, from, to });
}

function event(position: number, id: number, type: string, data: Record<string, unknown>): Served {
  return { specversion: '1.0', id: String(position), source: SOURCE, type, subject: `pets/${id}`, time: `2026-01-01T00:00:${String(position % 60).padStart(2, '0')}.000Z`, datacontenttype: 'application/json', data };
}

export interface Step {
  readonly process: string;
  readonly f: string;
  readonly invoke: Record<string, unknown>;
  /** The completion; none: the run ended with it outstanding. */
  readonly outcome?: 'ok' | 'fail' | 'info';
  readonly value?: Record<string, unknown>;
  /** How long the clock runs before its invoke (a lease left to expire). */
  readonly pauseMs?: number;
}

/** The history's JSON lines: each step's invoke then its completion, one millisecond apart. */
export function historyText(steps: readonly Step[]): string {
  const lines: string[] = [];
  let time = 0;
  for (const step of steps) {
    time += step.pauseMs ?? 0;
    lines.push(JSON.stringify({ index: lines.length, process: step.process, type: 'invoke', f: step.f, time: time++, value: step.invoke }));
    if (step.outcome) lines.push(JSON.stringify({ index: lines.length, process: step.process, type: step.outcome, f: step.f, time: time++, value: step.value ?? {} }));
  }
  return `${lines.join('\n')}\n`;
}

/** The clean history's log. */
export function cleanLog(): Served[] {
  return [
    added(1, 1, 'Rex', 1, 'available'),
    added(2, 2, 'Kit', 2, null),
    changed(3, 1, 'available', 'pending'),
    changed(4, 2, null, 'available'),
    changed(5, 1, 'pending', 'sold'),
    added(6, 3, 'Tom', 1, 'available'),
  ];
}

/**
 * A clean history: creations (one retried under its Idempotency-Key after an unknown outcome), changes
 * (one refused on a stale If-Match, one refused by the rules, one unknown that happened, one unknown
 * that did not), reads and listings with positions, a consumer that reconnects, and the log.
 */
export function cleanSteps(log: readonly Served[] = cleanLog()): Step[] {
  const pet1Pending = { id: 1, name: 'Rex', categoryId: 1, status: 'pending' };
  const pet2 = { id: 2, name: 'Kit', categoryId: 2, status: 'available' };
  const pet3 = { id: 3, name: 'Tom', categoryId: 1, status: 'available' };
  return [
    { process: 'a', f: 'create', invoke: { name: 'Rex', categoryId: 1, status: 'available' }, outcome: 'ok', value: { id: 1, position: 1 } },
    { process: 'b', f: 'create', invoke: { name: 'Kit', categoryId: 2 }, outcome: 'ok', value: { id: 2, position: 2 } },
    { process: 'a', f: 'set-status', invoke: { id: 1, status: 'pending', ifMatch: 1 }, outcome: 'ok', value: { version: 2, position: 3 } },
    { process: 'b', f: 'set-status', invoke: { id: 1, status: 'pending', ifMatch: 1 }, outcome: 'fail', value: { code: 'version_mismatch' } },
    { process: 'b', f: 'set-status', invoke: { id: 2, status: 'available' }, outcome: 'ok', value: { version: 2, position: 4 } },
    { process: 'a', f: 'read', invoke: { id: 1, minPosition: 3 }, outcome: 'ok', value: { pet: pet1Pending, version: 2 } },
    { process: 'b', f: 'set-status', invoke: { id: 1, status: 'sold' }, outcome: 'info', value: { error: 'timeout' } },
    { process: 'b', f: 'set-status', invoke: { id: 2, status: 'sold', ifMatch: 5 }, outcome: 'info', value: { status: 503 } },
    { process: 'a', f: 'create', invoke: { name: 'Tom', categoryId: 1, status: 'available', key: 'k1' }, outcome: 'info', value: { error: 'reset' } },
    { process: 'a', f: 'create', invoke: { name: 'Tom', categoryId: 1, status: 'available', key: 'k1' }, outcome: 'ok', value: { id: 3, position: 6 } },
    { process: 'a', f: 'set-status', invoke: { id: 1, status: 'available' }, outcome: 'fail', value: { code: 'illegal_transition' } },
    { process: 'c', f: 'list', invoke: { status: 'available', limit: 10, minPosition: 6 }, outcome: 'ok', value: { pets: [pet2, pet3] } },
    { process: 'c', f: 'list', invoke: { limit: 1, after: 1 }, outcome: 'ok', value: { pets: [pet2] } },
    { process: 'feed-1', f: 'feed', invoke: { after: 0 }, outcome: 'ok', value: { events: log.filter((e) => Number(e.id) <= 3) } },
    { process: 'feed-1', f: 'feed', invoke: { after: 3 }, outcome: 'ok', value: { events: log.filter((e) => Number(e.id) > 3) } },
    { process: 'log', f: 'log', invoke: {}, outcome: 'ok', value: { events: log } },
  ];
}

const GROUP = 'g';
/** The hand-made group's leases expire 1 s after they are handed out. */
export const GROUP_ACK_TIMEOUT_MS = 1000;

/** One claim's answer: each [position, lease, deliveries] with the log's event there. */
export function claimed(log: readonly Served[], ...entries: readonly (readonly [number, string, number?])[]): Record<string, unknown> {
  return { claims: entries.map(([position, lease, deliveries]) => ({ lease, position, deliveries: deliveries ?? 1, event: log.find((event) => Number(event.id) === position)! })) };
}

export const claimStep = (consumer: string, value: Record<string, unknown>, pauseMs?: number): Step =>
  ({ process: consumer, f: 'claim', invoke: { group: GROUP, consumer, max: 20 }, outcome: 'ok', value, ...(pauseMs ? { pauseMs } : {}) });

export const ackStep = (consumer: string, leases: readonly string[], stale: readonly string[] = []): Step =>
  ({ process: consumer, f: 'ack', invoke: { group: GROUP, leases }, outcome: 'ok', value: { acked: leases.length - stale.length, stale } });

export const parkStep = (consumer: string, leases: readonly string[], stale: readonly string[] = []): Step =>
  ({ process: consumer, f: 'nack', invoke: { group: GROUP, leases, park: true }, outcome: 'ok', value: { nacked: leases.length - stale.length, stale } });

export const replayStep = (process: string, replayed: number): Step =>
  ({ process, f: 'replay', invoke: { group: GROUP }, outcome: 'ok', value: { replayed } });

export const groupReadStep = (process: string, state: Record<string, unknown>, drained?: boolean): Step =>
  ({ process, f: 'group', invoke: { group: GROUP, ...(drained === undefined ? {} : { drained }) }, outcome: 'ok', value: state });

/**
 * A clean run of a consumer group over the clean log: per-pet order (pet 1's positions 3 and 5 one
 * after the other), a consumer that dies with two leases, their events handed out again once the leases
 * expired and its late ack answered stale, a state read, and a drain that ends at the head.
 */
export function cleanGroupSteps(log: readonly Served[] = cleanLog()): Step[] {
  return [
    { process: 'setup', f: 'group-create', invoke: { group: GROUP, ackTimeoutMs: GROUP_ACK_TIMEOUT_MS, maxDeliveries: 100, start: 'beginning' }, outcome: 'ok', value: { checkpoint: 0, head: 6 } },
    claimStep('c0', claimed(log, [1, 'L1'], [2, 'L2'], [6, 'L6'])),
    ackStep('c0', ['L1', 'L2', 'L6']),
    groupReadStep('c0', { checkpoint: 2, head: 6, inFlight: 0 }),
    claimStep('c1', claimed(log, [3, 'L3'], [4, 'L4'])),
    claimStep('c0', claimed(log, [3, 'L3b', 2], [4, 'L4b', 2]), 1500),
    ackStep('c1', ['L3', 'L4'], ['L3', 'L4']),
    ackStep('c0', ['L3b', 'L4b']),
    claimStep('c0', claimed(log, [5, 'L5'])),
    ackStep('c0', ['L5']),
    claimStep('drain', { claims: [] }),
    groupReadStep('drain', { checkpoint: 6, head: 6, inFlight: 0, parked: [] }, true),
  ];
}
