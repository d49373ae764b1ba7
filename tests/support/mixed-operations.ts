import { changeStatusOperation, createPetOperation, isConnectionLost } from './pet-workload.ts';
import type { Operation, OperationContext } from './pet-workload.ts';
import { rawExchange } from './raw-http.ts';

/** Reads and refusals to mix with writes: for load that looks like real use, bad clients included. */

async function expectStatus(context: OperationContext, what: string, path: string, init: RequestInit, expected: readonly number[]): Promise<'answered' | 'lost'> {
  try {
    const response = await fetch(`${context.baseUrl}${path}`, init);
    const text = await response.text();
    if (!expected.includes(response.status)) context.ledger.problems.push(`${what} answered ${response.status}: ${text.slice(0, 200)}`);
    return 'answered';
  } catch (error) {
    if (!isConnectionLost(error)) throw error;
    return 'lost';
  }
}

const withKey = (context: OperationContext, headers: Record<string, string> = {}) => ({ authorization: `Bearer ${context.key}`, ...headers });

export const listPetsOperation: Operation = {
  name: 'list',
  weight: 1,
  run(context) {
    const status = ['', 'status=available&', 'status=pending&', 'status=sold&'][Math.floor(context.random() * 4)];
    const query = `?${status}limit=${1 + Math.floor(context.random() * 100)}`;
    return expectStatus(context, `GET /pets${query}`, `/pets${query}`, { headers: withKey(context) }, [200]);
  },
};

export const getPetOperation: Operation = {
  name: 'get',
  weight: 1,
  run(context) {
    const ids = context.ledger.acknowledged.size;
    const id = ids > 0 && context.random() < 0.8 ? 1 + Math.floor(context.random() * ids) : 1_000_000_000 + Math.floor(context.random() * 1000);
    return expectStatus(context, `GET /pets/${id}`, `/pets/${id}`, { headers: withKey(context) }, [200, 404]);
  },
};

const REFUSED: ReadonlyArray<{ path: string; init: (context: OperationContext) => RequestInit; status: number; orElse?: number }> = [
  { path: '/pets', init: (context) => ({ method: 'POST', headers: withKey(context, { 'content-type': 'application/json' }), body: '{"name":' }), status: 400 },
  { path: '/pets', init: (context) => ({ method: 'POST', headers: withKey(context, { 'content-type': 'application/json' }), body: '{"name":"\\u0000","categoryId":1}' }), status: 400 },
  { path: '/pets', init: (context) => ({ method: 'POST', headers: withKey(context, { 'content-type': 'text/plain' }), body: 'Rex' }), status: 415 },
  { path: '/pets?limit=0', init: (context) => ({ headers: withKey(context) }), status: 400 },
  // Past the default cap on failed keys per client address, a wrong key is 429 instead.
  { path: '/pets', init: () => ({ headers: { authorization: 'Bearer not-the-key-0123456789' } }), status: 401, orElse: 429 },
  { path: '/pets/abc', init: (context) => ({ headers: withKey(context) }), status: 400 },
  { path: '/pets', init: (context) => ({ method: 'DELETE', headers: withKey(context) }), status: 405 },
];

export const refusedRequestOperation: Operation = {
  name: 'refused',
  weight: 1,
  run(context) {
    const pick = REFUSED[Math.floor(context.random() * REFUSED.length)]!;
    return expectStatus(context, `refused request to ${pick.path}`, pick.path, pick.init(context), pick.orElse === undefined ? [pick.status] : [pick.status, pick.orElse]);
  },
};

/** A request on a connection of its own that the server closes after answering: churns sockets. */
export const freshConnectionOperation: Operation = {
  name: 'fresh connection',
  weight: 1,
  async run(context) {
    const url = new URL(context.baseUrl);
    try {
      const exchange = await rawExchange(Number(url.port), `GET ${url.pathname}/pets?limit=5 HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${context.key}\r\nConnection: close\r\n\r\n`);
      if (exchange.response?.status !== 200) context.ledger.problems.push(`a fresh connection answered ${exchange.response?.status ?? 'nothing'}`);
      return 'answered';
    } catch {
      return 'lost';
    }
  },
};

/**
 * A steady day's mix, by relative weight: creates, status changes on acknowledged pets (each checked
 * against what the client knows of the pet), listings and lookups, refused requests, connection churn.
 */
export const MIXED_LOAD: readonly Operation[] = [
  { ...createPetOperation, weight: 3 },
  { ...changeStatusOperation, weight: 2 },
  { ...listPetsOperation, weight: 4 },
  { ...getPetOperation, weight: 2 },
  { ...refusedRequestOperation, weight: 1 },
  { ...freshConnectionOperation, weight: 0.5 },
];
