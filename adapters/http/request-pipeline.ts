import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { millisecondsSince, requestIdFor } from '../observability/request-log.ts';
import type { RequestFields } from '../observability/request-log.ts';
import type { RateDecision } from './rate-limit.ts';
import { HttpProblem } from './errors.ts';

/**
 * What is decided about a request once, before anything answers it, and shared by the cached-listing
 * fast path and the Koa app: each check reads or fills its field here instead of deciding again.
 */
export interface RequestState {
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** The Host rule's refusal, or undefined when the request may go on. */
  readonly hostProblem: HttpProblem | undefined;
  /** How many Authorization fields the request carries. */
  readonly authorizations: number;
  /** The key's verdict (`api-keys/require-api-key.ts`), decided at most once. */
  access: Access | Promise<Access> | undefined;
  /** The rate limit's decision (`rate-limit.ts`), taken at most once. */
  rate: RateDecision | undefined;
  /** The listing cache was asked for this request's query and had no answer. */
  listingMissed: boolean;
}

/** A request with a live key (its id, never the key), or the refusal to answer. */
export type Access = { readonly keyId: string } | HttpProblem;

const STATE = Symbol('petstore.requestState');

type WithState = IncomingMessage & { [STATE]?: RequestState };

// Like the parser's own rejections, these end the connection: the client's framing is not to be trusted.
const CLOSE = { Connection: 'close' };

/** RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host header is answered 400. */
function hostProblem(hosts: number, httpVersion: string): HttpProblem | undefined {
  if (hosts > 1) return new HttpProblem('invalid_header', 'a request carries one Host header, not several', CLOSE);
  if (hosts === 0 && httpVersion === '1.1') return new HttpProblem('invalid_header', 'an HTTP/1.1 request must carry a Host header', CLOSE);
  return undefined;
}

/** Gives the request its id (the client's X-Request-Id or a new one), echoes it, and decides the Host rule; counts the Authorization fields. */
export function beginRequest(request: IncomingMessage, response: ServerResponse): RequestState {
  const started = performance.now();
  const raw = request.rawHeaders;
  let hosts = 0;
  let authorizations = 0;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
    else if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations++;
  }
  const state: RequestState = {
    requestId: requestIdFor(request.headers['x-request-id']),
    started,
    hostProblem: hosts === 1 ? undefined : hostProblem(hosts, request.httpVersion),
    authorizations,
    access: undefined,
    rate: undefined,
    listingMissed: false,
  };
  response.setHeader('X-Request-Id', state.requestId);
  (request as WithState)[STATE] = state;
  return state;
}

/** The state `beginRequest` gave this request, begun now if it never passed through the server. */
export function requestState(request: IncomingMessage, response: ServerResponse): RequestState {
  return (request as WithState)[STATE] ?? beginRequest(request, response);
}

export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

/** Records an answer once it is sent: its one log line, and its duration in the metrics when they are on. */
export type RecordAnswer = (state: Pick<RequestState, 'requestId' | 'started'>, method: string, route: string | null, path: string, status: number, apiKeyId: string | null) => void;

export function answerRecorder(logRequest: (fields: RequestFields) => void, observeRequest?: ObserveRequest): RecordAnswer {
  return (state, method, route, path, status, apiKeyId) => {
    const durationMs = millisecondsSince(state.started);
    observeRequest?.(method, route ?? 'unmatched', status, durationMs / 1000);
    logRequest({ requestId: state.requestId, method, route, path, status, durationMs, apiKeyId });
  };
}

/**
 * Outermost in the Koa app (inside the server span): puts the request's state on `ctx.state` and
 * records the answer the rest of the chain gave. A 405 names the route its path belongs to (`ctx.state.route`).
 */
export function recordAnswers(record: RecordAnswer) {
  return async function recordAnswersMiddleware(ctx: Context, next: Next): Promise<void> {
    const state = requestState(ctx.req, ctx.res);
    ctx.state.request = state;
    ctx.state.requestId = state.requestId;
    try {
      await next();
    } finally {
      const route = ctx._matchedRoute ?? ctx.state.route;
      record(state, ctx.method, typeof route === 'string' ? route : null, ctx.path, ctx.status, ctx.state.apiKeyId ?? null);
    }
  };
}

/** The state of a request inside the Koa app. */
export function stateOf(ctx: Context): RequestState {
  return (ctx.state.request as RequestState | undefined) ?? requestState(ctx.req, ctx.res);
}
