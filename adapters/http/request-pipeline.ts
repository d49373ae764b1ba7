import type { IncomingMessage, ServerResponse } from 'node:http';
import { Stream } from 'node:stream';
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

// Koa's composition of the app's middleware, run here on the context the pipeline made.
interface KoaComposition {
  compose(middleware: Koa['middleware']): (ctx: Context) => Promise<void>;
}

/**
 * The one way into the service for a request Node has parsed: begin its state (id, Host rule), answer
 * it through the branch or the Koa app (inside `around`), then record the answer, in this one place.
 */
export function createRequestPipeline({ app, record, branch, around }: RequestPipelineOptions): (request: IncomingMessage, response: ServerResponse) => void {
  const middleware = (app as unknown as KoaComposition).compose(app.middleware);
  // A context's `onerror` reports to the app as an 'error' event, which must be heard: as Koa's own listener does.
  if (app.listenerCount('error') === 0) app.on('error', (error: Error) => app.onerror(error));
  const throughApp = (request: IncomingMessage, response: ServerResponse, state: RequestState): Promise<Answered> => {
    const ctx = app.createContext(request, response);
    ctx.state.request = state;
    ctx.state.requestId = state.requestId;
    // As Koa: until a middleware answers, the answer is a 404.
    response.statusCode = 404;
    return middleware(ctx).then(() => {
      sendAnswer(ctx);
      return answeredBy(ctx);
    });
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

// Statuses whose answers carry no content (RFC 9110 §15.3.5, §15.3.6, §15.4.5).
const WITHOUT_CONTENT = new Set([204, 205, 304]);

/**
 * Sends what the app's middleware left on the context, as Koa's own `respond` does for the bodies this
 * service sets (text, bytes, a JSON value, none). Written here rather than through Koa's `handleRequest`,
 * which ties listeners to every response and its socket only to report a client gone mid-answer as an
 * app 'error' (nothing acts on it: failures are rendered by `renderErrors`); measured, that was about a
 * tenth of the CPU of a created pet.
 */
function sendAnswer(ctx: Context): void {
  const response = ctx.res;
  // An event stream answers on the response itself.
  if (ctx.respond === false) return;
  if (!ctx.writable) {
    response.end();
    return;
  }
  const body: unknown = ctx.body;
  if (WITHOUT_CONTENT.has(response.statusCode)) {
    ctx.body = null;
    response.end();
    return;
  }
  if (ctx.method === 'HEAD') {
    if (!response.headersSent && !response.hasHeader('Content-Length') && Number.isInteger(ctx.response.length)) ctx.length = ctx.response.length;
    response.end();
    return;
  }
  if (body === null || body === undefined) {
    // A body set to null on purpose (a redirect) is empty; none at all says its status in text.
    const text = body === null ? '' : ctx.message || String(response.statusCode);
    if (body === null) ctx.remove('Content-Type');
    else ctx.type = 'text';
    ctx.length = Buffer.byteLength(text);
    response.end(text);
    return;
  }
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    response.end(body);
    return;
  }
  if (body instanceof Stream) throw new TypeError('a stream body is not sent by the request pipeline: answer on ctx.res with ctx.respond = false');
  const json = JSON.stringify(body);
  ctx.length = Buffer.byteLength(json);
  response.end(json);
}

/** What the Koa app answered: a 405 names the route its path belongs to (`ctx.state.route`). */
function answeredBy(ctx: Context): Answered {
  const route = ctx._matchedRoute ?? ctx.state.route;
  return { route: typeof route === 'string' ? route : null, path: ctx.path, status: ctx.status, keyId: ctx.state.apiKeyId ?? null };
}
