import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Context } from 'koa';
import { millisecondsSince } from '../observability/request-log.ts';
import type { RequestFields } from '../observability/request-log.ts';
import { beginRequest } from './request-state.ts';
import type { RequestState } from './request-state.ts';

/** How a request was answered, for its one record: the route template (null when none matched), the path, the status, the key's id. */
export interface Answered {
  readonly route: string | null;
  readonly path: string;
  readonly status: number;
  readonly keyId: string | null;
}

/** Answers a request on Node's response and says how. */
export type AnswerRequest = (request: IncomingMessage, response: ServerResponse, state: RequestState) => Answered | Promise<Answered>;

/** Wraps the whole answer (tracing: one server span a request, whichever branch answers). */
export type AroundAnswer = (answer: AnswerRequest) => AnswerRequest;

/**
 * A branch tried before the Koa app: answers what it can, or returns undefined and leaves the request
 * to the app untouched (a promise of either when it must first ask the database).
 */
export type AnswerBranch = (request: IncomingMessage, response: ServerResponse, state: RequestState) => Answered | undefined | Promise<Answered | undefined>;

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
  /** Tried first (cached listings): what it leaves goes to the app. */
  readonly branch?: AnswerBranch | undefined;
  readonly around?: AroundAnswer | undefined;
}

// What Koa's own request listener does with a context; called here so that the pipeline keeps the context it made.
interface KoaHandling {
  compose(middleware: Koa['middleware']): (ctx: Context) => Promise<void>;
  handleRequest(ctx: Context, middleware: (ctx: Context) => Promise<void>): Promise<void>;
}

/**
 * The one way into the service for a request Node has parsed: begin its state (id, Host rule), answer
 * it through the branch or the Koa app (inside `around`), then record the answer, in this one place.
 */
export function createRequestPipeline({ app, record, branch, around }: RequestPipelineOptions): (request: IncomingMessage, response: ServerResponse) => void {
  const koa = app as unknown as KoaHandling;
  const middleware = koa.compose(app.middleware);
  // As Koa's own listener does: a failure Koa reports (a client gone mid-answer) is an 'error' event, which must be heard.
  if (app.listenerCount('error') === 0) app.on('error', (error: Error) => app.onerror(error));
  const throughApp = (request: IncomingMessage, response: ServerResponse, state: RequestState): Promise<Answered> => {
    const ctx = app.createContext(request, response);
    ctx.state.request = state;
    ctx.state.requestId = state.requestId;
    return koa.handleRequest(ctx, middleware).then(() => answeredBy(ctx));
  };
  const branchThenApp = branch && ((request: IncomingMessage, response: ServerResponse, state: RequestState): Answered | Promise<Answered> => {
    const answered = branch(request, response, state);
    if (answered instanceof Promise) return answered.then((settled) => settled ?? throughApp(request, response, state));
    return answered ?? throughApp(request, response, state);
  });
  const answerEither = branchThenApp ?? throughApp;
  const answer = around ? around(answerEither) : answerEither;

  return function dispatch(request, response) {
    const state = beginRequest(request, response);
    const answered = answer(request, response, state);
    // Neither branch rejects (Koa renders every failure); should one ever, the connection ends rather than the process.
    if (answered instanceof Promise) answered.then((settled) => record(state, request.method!, settled), () => response.destroy());
    else record(state, request.method!, answered);
  };
}

/** What the Koa app answered: a 405 names the route its path belongs to (`ctx.state.route`). */
function answeredBy(ctx: Context): Answered {
  const route = ctx._matchedRoute ?? ctx.state.route;
  return { route: typeof route === 'string' ? route : null, path: ctx.path, status: ctx.status, keyId: ctx.state.apiKeyId ?? null };
}
