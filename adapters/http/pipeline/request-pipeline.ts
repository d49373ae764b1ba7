import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import { millisecondsSince } from '../../observability/request-log.ts';
import type { Answered, RequestFields } from '../../observability/request-log.ts';
import type { AroundAnswer } from '../../observability/traced-http.ts';
import { beginRequest, handAnswerHeaders } from './request-state.ts';
import type { AnswerBranch, RequestState } from './request-state.ts';
import type { RouteTable } from './route-table.ts';

/**
 * How a branch answers: status, the headers the request's state keeps for every answer with the
 * answer's own, and body, written on Node's response in this one place (one `writeHead`), and what the
 * record needs returned. (The Koa app answers through Koa's own `respond`.)
 */
export function sendAnswer(
  response: ServerResponse, state: RequestState, status: number, headers: Readonly<Record<string, string | number>>, body: string | Buffer,
  record: Omit<Answered, 'status'>,
): Answered {
  const all = state.answerHeaders ?? {};
  state.answerHeaders = undefined;
  for (const name in headers) all[name] = headers[name]!;
  all['Content-Length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  response.writeHead(status, all);
  response.end(body);
  // Built field by field: a spread here cost about a sixth of a cached listing's throughput (measured).
  return { route: record.route, path: record.path, status, keyId: record.keyId };
}

export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

/** Records an answer once it is sent: its one log line, and its duration in the metrics when they are on. */
export type RecordAnswer = (state: Pick<RequestState, 'requestId' | 'started'>, method: string, answered: Answered) => void;

export function answerRecorder(logRequest: (fields: RequestFields) => void, observeRequest?: ObserveRequest): RecordAnswer {
  return (state, method, { route, path, status, keyId }) => {
    const durationMs = millisecondsSince(state.started);
    observeRequest?.(method, route ?? 'unmatched', status, durationMs / 1000);
    logRequest({ requestId: state.requestId, method, route, path, status, durationMs, apiKeyId: keyId });
  };
}

export interface RequestPipelineOptions {
  readonly app: Koa;
  readonly record: RecordAnswer;
  /** Where each request's route is found, once: its branch (a creation, a cached listing) is tried first, and what it leaves goes to the app. */
  readonly routes: RouteTable;
  readonly around?: AroundAnswer | undefined;
}

/**
 * The one way into the service for a request Node has parsed: begin its state (id, Host rule), answer
 * it through the branch or the Koa app (inside `around`), then record the answer, in this one place.
 * Both run the one list of guards (`guards.ts`) before any route; the app answers through Koa's own
 * `callback()`, and finds the request's state from the request (`stateOf`).
 */
export function createRequestPipeline({ app, record, routes, around }: RequestPipelineOptions): (request: IncomingMessage, response: ServerResponse) => void {
  const handle = app.callback();
  const throughApp = (request: IncomingMessage, response: ServerResponse, state: RequestState): Promise<Answered> => {
    handAnswerHeaders(state, response);
    return handle(request, response).then(() => answeredBy(request, response, state));
  };
  const answerEither = (request: IncomingMessage, response: ServerResponse, state: RequestState): Answered | Promise<Answered> => {
    const branch = matchedBranch(routes, request, state);
    if (branch === undefined) return throughApp(request, response, state);
    const answered = branch(request, response, state);
    if (answered instanceof Promise) return answered.then((settled) => settled ?? throughApp(request, response, state));
    return answered ?? throughApp(request, response, state);
  };
  const answer = around ? around(answerEither) : answerEither;

  return function dispatch(request, response) {
    const state = beginRequest(request);
    const answered = answer(request, response, state);
    // Neither branch rejects (Koa renders every failure); should one ever, the connection ends rather than the process.
    if (answered instanceof Promise) answered.then((settled) => record(state, request.method!, settled), () => response.destroy());
    else record(state, request.method!, answered);
  };
}

/** Finds the request's route, once, keeping it on its state; returns the route's branch when it has one for this method. */
export function matchedBranch(routes: RouteTable, request: IncomingMessage, state: RequestState): AnswerBranch | undefined {
  const matched = routes.match(request.method!, pathOf(request.url!));
  state.matched = matched;
  return matched?.branch;
}

/**
 * The path of a request target, as Koa reads it: what comes before the query or a fragment; of an
 * absolute-form target (`GET http://host/v1/pets`, which RFC 9112 has a server accept), its path.
 */
export function pathOf(target: string): string {
  if (target.charCodeAt(0) !== 47 /* / */) return absolutePath(target);
  const query = target.indexOf('?');
  const fragment = target.indexOf('#');
  const end = fragment >= 0 && (query < 0 || fragment < query) ? fragment : query;
  return end < 0 ? target : target.slice(0, end);
}

function absolutePath(target: string): string {
  try {
    return new URL(target).pathname;
  } catch {
    return target;
  }
}

/** What the Koa app answered, from the request's state: the route the guards found (or the 405's), the key they let through. */
function answeredBy(request: IncomingMessage, response: ServerResponse, state: RequestState): Answered {
  const url = request.url!;
  const queryStart = url.indexOf('?');
  return { route: state.route ?? null, path: queryStart < 0 ? url : url.slice(0, queryStart), status: response.statusCode, keyId: state.keyId };
}
