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

function send(target: Target, path: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Answer | Outcome> {
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

const isOutcome = (answer: Answer | Outcome): answer is Outcome => 'type' in answer;
const refused = (answer: Answer): Outcome => ({ type: 'fail', value: { status: answer.status, code: (answer.body as { code?: unknown })?.code ?? null } });
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
  return { type: 'ok', value: { id: (answer.body as { id: number }).id, position: positionOf(answer) } };
}

export async function setStatus(target: Target, change: { id: number; status: string; ifMatch?: number }): Promise<Outcome> {
  const answer = await send(target, `/pets/${change.id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json', ...(change.ifMatch === undefined ? {} : { 'if-match': `"${change.ifMatch}"` }) },
    body: JSON.stringify({ status: change.status }),
  });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  return { type: 'ok', value: { version: versionOf(answer), position: positionOf(answer) } };
}

const minPositionHeader = (minPosition: number | undefined): Record<string, string> =>
  (minPosition === undefined ? {} : { 'petstore-min-position': String(minPosition) });

export async function readPet(target: Target, read: { id: number; minPosition?: number }): Promise<Outcome> {
  const answer = await send(target, `/pets/${read.id}`, { headers: minPositionHeader(read.minPosition) });
  if (isOutcome(answer)) return answer;
  if (answer.status === 404) return { type: 'ok', value: { pet: null } };
  if (answer.status !== 200) return refused(answer);
  return { type: 'ok', value: { pet: answer.body, version: versionOf(answer) } };
}

export async function listPets(target: Target, list: { status?: string; limit: number; after?: number; minPosition?: number }): Promise<Outcome> {
  const query = new URLSearchParams({ limit: String(list.limit) });
  if (list.status !== undefined) query.set('status', list.status);
  if (list.after !== undefined) query.set('after', String(list.after));
  const answer = await send(target, `/pets?${query}`, { headers: minPositionHeader(list.minPosition) });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  return { type: 'ok', value: { pets: answer.body } };
}

/** One JSON page of the feed. */
export async function feedPage(target: Target, after: number, limit: number): Promise<Outcome> {
  const answer = await send(target, `/events?after=${after}&limit=${limit}`, {});
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  return { type: 'ok', value: { events: answer.body } };
}
