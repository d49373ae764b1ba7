import { Agent, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { Completion } from './history-file.ts';

/** The requests the recorder makes, each read as a history completion: 2xx ok, 4xx fail, anything else info. */

export interface Outcome {
  readonly type: Completion;
  readonly value: Record<string, unknown>;
}

export interface Target {
  /** The instance's base address, …/v1. */
  readonly base: string;
  readonly key: string;
  /** How long a request may take before its outcome is unknown. */
  readonly timeoutMs: number;
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/** Kept-alive connections: node:http costs the recorder far less CPU a request than fetch, on a machine the service shares. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export function send(target: Target, path: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Answer | Outcome> {
  return new Promise((resolve) => {
    const request = httpRequest(`${target.base}${path}`, {
      agent, method: init.method ?? 'GET', headers: { authorization: `Bearer ${target.key}`, ...init.headers }, timeout: target.timeoutMs,
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => resolve({ type: 'info', value: { error: errorName(error) } }));
      response.on('end', () => {
        clearTimeout(deadline);
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text for the record
        }
        const status = response.statusCode ?? 0;
        if (status >= 500) resolve({ type: 'info', value: { status, code: (body as { code?: unknown })?.code ?? null } });
        else resolve({ status, headers: response.headers, body });
      });
    });
    // The whole exchange is bounded, not only the socket's silences: a paused service may send headers and stop.
    const deadline = setTimeout(() => request.destroy(new Error('timeout')), target.timeoutMs);
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error) => {
      clearTimeout(deadline);
      resolve({ type: 'info', value: { error: errorName(error) } });
    });
    request.end(init.body);
  });
}

function errorName(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

export const isOutcome = (answer: Answer | Outcome): answer is Outcome => 'type' in answer;

/**
 * An answer the recorder could not read (a body cut short, a proxy's page in place of JSON, a field
 * missing): what happened is unknown, so it is `info`, never an `ok` with a hole in it.
 */
const unreadable = (answer: Answer, what: string): Outcome => ({ type: 'info', value: { status: answer.status, error: `unreadable answer: ${what}` } });
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `ok` with these fields of the answer, when each is a whole number; otherwise unknown. */
export function okWithIntegers(answer: Answer, value: Record<string, unknown>): Outcome {
  const missing = Object.keys(value).find((name) => !Number.isSafeInteger(value[name]));
  return missing === undefined ? { type: 'ok', value } : unreadable(answer, `${missing} is not a whole number`);
}
export const refused = (answer: Answer): Outcome => ({ type: 'fail', value: { status: answer.status, code: (answer.body as { code?: unknown })?.code ?? null } });
const positionOf = (answer: Answer) => Number(answer.headers['petstore-position']);
const versionOf = (answer: Answer) => Number(/^"(\d+)"$/.exec(answer.headers.etag ?? '')?.[1]);

export interface NewPet {
  readonly name: string;
  readonly categoryId: number;
  readonly status?: string;
  readonly key?: string;
}

export async function createPet(target: Target, pet: NewPet): Promise<Outcome> {
  const { key, ...body } = pet;
  const answer = await send(target, '/pets', {
    method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify(body),
  });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 201) return refused(answer);
  return okWithIntegers(answer, { id: isRecord(answer.body) ? answer.body.id : undefined, position: positionOf(answer) });
}

export async function setStatus(target: Target, change: { id: number; status: string; ifMatch?: number }): Promise<Outcome> {
  const answer = await send(target, `/pets/${change.id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json', ...(change.ifMatch === undefined ? {} : { 'if-match': `"${change.ifMatch}"` }) },
    body: JSON.stringify({ status: change.status }),
  });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  return okWithIntegers(answer, { version: versionOf(answer), position: positionOf(answer) });
}

const minPositionHeader = (minPosition: number | undefined): Record<string, string> =>
  (minPosition === undefined ? {} : { 'petstore-min-position': String(minPosition) });

export async function readPet(target: Target, read: { id: number; minPosition?: number }): Promise<Outcome> {
  const answer = await send(target, `/pets/${read.id}`, { headers: minPositionHeader(read.minPosition) });
  if (isOutcome(answer)) return answer;
  if (answer.status === 404) return { type: 'ok', value: { pet: null } };
  if (answer.status !== 200) return refused(answer);
  if (!isRecord(answer.body) || !Number.isSafeInteger(answer.body.id)) return unreadable(answer, 'not a pet');
  if (!Number.isSafeInteger(versionOf(answer))) return unreadable(answer, 'no ETag');
  return { type: 'ok', value: { pet: answer.body, version: versionOf(answer) } };
}

export async function listPets(target: Target, list: { status?: string; limit: number; after?: number; minPosition?: number }): Promise<Outcome> {
  const query = new URLSearchParams({ limit: String(list.limit) });
  if (list.status !== undefined) query.set('status', list.status);
  if (list.after !== undefined) query.set('after', String(list.after));
  const answer = await send(target, `/pets?${query}`, { headers: minPositionHeader(list.minPosition) });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  if (!Array.isArray(answer.body)) return unreadable(answer, 'not a list');
  return { type: 'ok', value: { pets: answer.body } };
}

/** One JSON page of the feed. */
export async function feedPage(target: Target, after: number, limit: number): Promise<Outcome> {
  const answer = await send(target, `/events?after=${after}&limit=${limit}`, {});
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  if (!Array.isArray(answer.body)) return unreadable(answer, 'not a list of events');
  return { type: 'ok', value: { events: answer.body } };
}

const postJson = (target: Target, path: string, body: unknown, method = 'POST') =>
  send(target, path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

export interface GroupSettings {
  readonly group: string;
  readonly ackTimeoutMs: number;
  readonly maxDeliveries: number;
  readonly start: 'beginning' | 'end' | number;
}

/** Creates a consumer group (or finds it with the same settings): its state. */
export async function createGroup(target: Target, settings: GroupSettings): Promise<Outcome> {
  const { group, ...body } = settings;
  const answer = await postJson(target, `/consumer-groups/${group}`, body, 'PUT');
  if (isOutcome(answer)) return answer;
  if (answer.status !== 201 && answer.status !== 200) return refused(answer);
  if (!isRecord(answer.body)) return unreadable(answer, 'not a group');
  return okWithIntegers(answer, { checkpoint: answer.body.checkpoint, head: answer.body.head });
}

export async function claimEvents(target: Target, claim: { group: string; consumer: string; max: number }): Promise<Outcome> {
  const answer = await postJson(target, `/consumer-groups/${claim.group}/claims`, { consumer: claim.consumer, max: claim.max });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  const claims = isRecord(answer.body) ? answer.body.claims : undefined;
  if (!Array.isArray(claims) || !claims.every(isRecord)) return unreadable(answer, 'claims is not a list');
  return { type: 'ok', value: { claims: claims.map(({ lease, position, deliveries, event }) => ({ lease, position, deliveries, event })) } };
}

export async function ackLeases(target: Target, ack: { group: string; leases: readonly string[] }): Promise<Outcome> {
  const answer = await postJson(target, `/consumer-groups/${ack.group}/acks`, { leases: ack.leases });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  if (!isRecord(answer.body) || !Array.isArray(answer.body.stale)) return unreadable(answer, 'stale is not a list');
  const { acked, stale } = answer.body;
  return Number.isSafeInteger(acked) ? { type: 'ok', value: { acked, stale } } : unreadable(answer, 'acked is not a whole number');
}

/** Parks the events of `leases` still held (a nack with `park`). */
export async function parkLeases(target: Target, nack: { group: string; leases: readonly string[] }): Promise<Outcome> {
  const answer = await postJson(target, `/consumer-groups/${nack.group}/nacks`, { leases: nack.leases, park: true });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  if (!isRecord(answer.body) || !Array.isArray(answer.body.stale)) return unreadable(answer, 'stale is not a list');
  const { nacked, stale } = answer.body;
  return Number.isSafeInteger(nacked) ? { type: 'ok', value: { nacked, stale } } : unreadable(answer, 'nacked is not a whole number');
}

/** Hands every parked event of the group out again (the checkpoint may move back). */
export async function replayParked(target: Target, group: string): Promise<Outcome> {
  const answer = await postJson(target, `/consumer-groups/${group}/parked/replay`, {});
  if (isOutcome(answer)) return answer;
  if (answer.status !== 202) return refused(answer);
  const replayed = isRecord(answer.body) ? answer.body.replayed : undefined;
  return Number.isSafeInteger(replayed) ? { type: 'ok', value: { replayed } } : unreadable(answer, 'replayed is not a whole number');
}

/** A group's state, with every parked position when `parked` (read page by page, a bounded number of pages). */
export async function readGroup(target: Target, group: string, parked: boolean): Promise<Outcome> {
  const answer = await send(target, `/consumer-groups/${group}`, {});
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  if (!isRecord(answer.body)) return unreadable(answer, 'not a group');
  const state = okWithIntegers(answer, { checkpoint: answer.body.checkpoint, head: answer.body.head, inFlight: answer.body.inFlight });
  if (!parked || state.type !== 'ok') return state;
  const { checkpoint, head, inFlight } = state.value;
  const positions: number[] = [];
  for (let pages = 0, after = 0; pages < 50; pages++) {
    const page = await send(target, `/consumer-groups/${group}/parked?limit=100&after=${after}`, {});
    if (isOutcome(page)) return page;
    if (page.status !== 200) return refused(page);
    if (!Array.isArray(page.body)) return unreadable(page, 'parked is not a list');
    const entries = page.body as { position: number }[];
    positions.push(...entries.map((entry) => entry.position));
    if (entries.length < 100) return { type: 'ok', value: { checkpoint, head, inFlight, parked: positions } };
    after = entries.at(-1)!.position;
  }
  return { type: 'info', value: { error: 'more than 5000 parked events' } };
}
