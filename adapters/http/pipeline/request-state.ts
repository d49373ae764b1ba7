import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { requestIdFor } from '../../observability/request-log.ts';
import type { Answered } from '../../observability/request-log.ts';
import { HttpProblem } from './errors.ts';

/**
 * What is decided about a request once, where the pipeline begins it: each check reads or fills its
 * field here instead of deciding again, whether the cached listing or the Koa app asks.
 */
export interface RequestState {
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** The Host rule's refusal, or undefined when the request may go on. */
  readonly hostProblem: HttpProblem | undefined;
  /** How many Authorization fields the request carries. */
  readonly authorizations: number;
  /** The key's verdict (`require-api-key.ts`), decided at most once. */
  access: Access | Promise<Access> | undefined;
  /** The id of the live key the request carries, once the key guard let it through (or the log looked it up). */
  keyId: string | null;
  /** The route the request is for, found once by the route table (`route-table.ts`) as the pipeline begins it. */
  matched: MatchedRoute | undefined;
  /** The template of the route the request was for, once known: its log line and metrics name it. */
  route: string | undefined;
  /** The rate limit's decision (`rate-limit.ts`), taken at most once. */
  rate: RateDecision | undefined;
  /** The listing cache was asked for this request's query and held no answer: the route reads the catalogue without asking again. */
  listingNotCached: boolean;
  /** The recorded trace this request belongs to, when traces are on; the events it causes carry it. */
  traceId: string | undefined;
  /**
   * Headers every answer to the request carries (its id, the rate limit's, the guards'), kept here until
   * the answer: a branch writes them with its own in one `writeHead` (each `setHeader` costs about 0.1 µs
   * more), the Koa app finds them set on Node's response. Undefined once handed to the response.
   */
  answerHeaders: Record<string, string | number> | undefined;
}

/** A route's context in the Koa app: its path's parameters, decoded. */
export type RouteContext = Context & { params: Record<string, string> };
export type RouteHandler = (ctx: RouteContext, next: Next) => unknown;

/** Headers every answer of a route carries, refusals included (a deprecated operation's). */
export type RouteMarks = () => Readonly<Record<string, string>>;

/**
 * A branch tried before the Koa app: answers what it can, or returns undefined and leaves the request
 * to the app untouched (a promise of either when it must first ask the database).
 */
export type AnswerBranch = (request: IncomingMessage, response: ServerResponse, state: RequestState) => Answered | undefined | Promise<Answered | undefined>;

/** One operation of the route table: where it is, what guards it, and who answers it. */
export interface Route {
  /** The operation's name (the OpenAPI document's `operationId`, where it has one). */
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Literal segments and `:name` parameters, each a whole segment; matched exactly and case-sensitively. */
  readonly template: string;
  /** Its operations require an API key (the key and the rate limit guard it). */
  readonly keyed: boolean;
  readonly marks?: RouteMarks | undefined;
  /** Tried by the request pipeline before the Koa app (a creation, a cached listing): answers what it can. */
  readonly branch?: AnswerBranch | undefined;
  /** The Koa middleware that answer it, in order. */
  readonly handlers: readonly RouteHandler[];
}

/** The route a request is for, found once. */
export interface MatchedRoute {
  readonly route: Route;
  readonly params: Record<string, string>;
  /** The route's branch when the request is its very method (a HEAD is the app's, never a branch's). */
  readonly branch: AnswerBranch | undefined;
}

/** A request with a live key (its id, never the key), or the refusal to answer. */
export type Access = { readonly keyId: string } | HttpProblem;

/** The rate limit's answer to one request. */
export interface RateDecision {
  readonly allowed: boolean;
  /** `RateLimit-Policy` and `RateLimit`, for every answer. */
  readonly headers: Readonly<Record<string, string>>;
  readonly secondsToNextToken: number;
}

// Like the parser's own rejections, these end the connection: the client's framing is not to be trusted.
const CLOSE_CONNECTION = { Connection: 'close' };

/** RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host header is answered 400. */
function hostProblem(hosts: number, httpVersion: string): HttpProblem | undefined {
  if (hosts > 1) return new HttpProblem('invalid_header', 'a request carries one Host header, not several', CLOSE_CONNECTION);
  if (hosts === 0 && httpVersion === '1.1') return new HttpProblem('invalid_header', 'an HTTP/1.1 request must carry a Host header', CLOSE_CONNECTION);
  return undefined;
}

/** Gives the request its id (the client's X-Request-Id or a new one), echoes it, and decides the Host rule; counts the Authorization fields. */
export function beginRequest(request: IncomingMessage): RequestState {
  const started = performance.now();
  const raw = request.rawHeaders;
  let hosts = 0;
  let authorizations = 0;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
    else if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations++;
  }
  const requestId = requestIdFor(request.headers['x-request-id']);
  const state: RequestState = {
    requestId,
    started,
    hostProblem: hosts === 1 ? undefined : hostProblem(hosts, request.httpVersion),
    authorizations,
    access: undefined,
    keyId: null,
    matched: undefined,
    route: undefined,
    rate: undefined,
    listingNotCached: false,
    traceId: undefined,
    answerHeaders: { 'X-Request-Id': requestId },
  };
  (request as StatefulRequest)[STATE] = state;
  return state;
}

/** Adds a header to every answer to the request: kept on its state for the answer, or set on Node's response once the response has them. */
export function addAnswerHeader(state: RequestState, response: ServerResponse, name: string, value: string | number): void {
  if (state.answerHeaders === undefined) response.setHeader(name, value);
  else state.answerHeaders[name] = value;
}

/** Sets the kept headers on Node's response, for whatever answers through it (the Koa app); later ones go there directly. */
export function handAnswerHeaders(state: RequestState, response: ServerResponse): void {
  const kept = state.answerHeaders;
  if (kept === undefined) return;
  state.answerHeaders = undefined;
  for (const name in kept) response.setHeader(name, kept[name]!);
}

// The state the pipeline began for a request, found again by the Koa app from the request alone: a
// property of the request rather than a WeakMap entry, which cost every request a share of the GC's time.
const STATE = Symbol('petstore.requestState');
type StatefulRequest = IncomingMessage & { [STATE]?: RequestState };

/** The state of a request inside the Koa app: the one the pipeline began (or begun here, for an app run on its own). */
export function stateOf(ctx: Context): RequestState {
  const began = (ctx.req as StatefulRequest)[STATE];
  if (began !== undefined) return began;
  const state = beginRequest(ctx.req);
  handAnswerHeaders(state, ctx.res);
  return state;
}

/** The id of the key the key guard let through: only a keyed route asks, after the guards. */
export function keyIdOf(ctx: Context): string {
  const { keyId } = stateOf(ctx);
  if (keyId === null) throw new Error('a keyed route ran without the key guard');
  return keyId;
}
