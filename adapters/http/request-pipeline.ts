import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { millisecondsSince, requestIdFor } from '../observability/request-log.ts';
import type { RequestFields } from '../observability/request-log.ts';
import type { RateDecision } from './rate-limit.ts';
import type { HttpProblem } from './errors.ts';

/**
 * What is decided about a request once, before anything answers it, and shared by the cached-listing
 * fast path and the Koa app: each check reads or fills its field here instead of deciding again.
 */
export interface RequestState {
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** How many Host and Authorization fields the request carries. */
  readonly hosts: number;
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

/** Gives the request its id (the client's X-Request-Id or a new one), echoes it, and counts the fields checked later. */
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
    requestId: requestIdFor(request.headers['x-request-id']), started, hosts, authorizations, access: undefined, rate: undefined, listingMissed: false,
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
