import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { IllegalOrderTransition, IllegalStatusTransition, PetNotAvailable, PetReserved, PetRuleViolation, UnknownPet } from '../../../domain/index.ts';
import {
  GroupLimitReached, GroupNotFound, GroupRequestRefused, IdempotencyKeyReused, InvalidPetQuery, OrderNotFound, PetNotFound, StoreUnavailable, StreamVersionConflict,
  TooMuchContention, VersionMismatch, WebhookLimitReached,
} from '../../../application/index.ts';
import { ERROR_STATUS } from '../../../contract/error-codes.ts';
import type { ErrorCode } from '../../../contract/error-codes.ts';
import { createRepeatedFaultLog } from '../../observability/repeated-fault-log.ts';
import { JSON_TYPE } from './media-types.ts';

// The table lives in a file that imports nothing, so the client can take its codes as types.
export { ERROR_STATUS } from '../../../contract/error-codes.ts';
export type { ErrorCode } from '../../../contract/error-codes.ts';

export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly status: number;
}

/** An answer that is an error: thrown anywhere in the chain, rendered by `renderErrors`. */
export class HttpProblem extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpProblem';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }

  get body(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { code, message, status: ERROR_STATUS[code] };
}

/** The problem a failure is answered with, its fault logged as the service logs faults. */
export type ProblemOf = (error: unknown, requestId: string) => HttpProblem;

/**
 * A storage fault is logged once, then counted: no stack per request. Any other failure answered 5xx is
 * logged with its stack (never sent); a deliberate 503 (not ready) is in the request's log line already.
 */
export function createProblemOf(logger: Logger): ProblemOf {
  const logStorageFault = createRepeatedFaultLog(logger);
  return (error, requestId) => {
    const problem = toProblem(error);
    if (error instanceof StoreUnavailable) logStorageFault(error);
    else if (problem.status >= 500 && !(error instanceof HttpProblem && problem.status === 503)) logger.error({ err: error, requestId }, 'request failed');
    return problem;
  };
}

/**
 * First in the chain: turns every failure into `{code, message, status}` as JSON.
 * Koa's own `onerror` would strip the headers already set (Deprecation, WWW-Authenticate) and answer text.
 */
export function renderErrors(problemOf: ProblemOf, requestIdOf: (ctx: Context) => string) {
  return async function renderErrorsMiddleware(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 404) throw new HttpProblem('not_found', `no resource at ${ctx.path}`);
    } catch (error) {
      const problem = problemOf(error, requestIdOf(ctx));
      discardUnreadBody(ctx.req);
      ctx.status = problem.status;
      for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
      ctx.body = problem.body;
    }
  };
}

/** A problem as a pipeline branch that owns its request answers it (`renderErrors` gives the app's the same status, headers and body). */
export function problemAnswer(request: IncomingMessage, problem: HttpProblem): [status: number, headers: Readonly<Record<string, string>>, body: string] {
  discardUnreadBody(request);
  return [problem.status, { ...problem.headers, 'Content-Type': JSON_TYPE }, JSON.stringify(problem.body)];
}

/**
 * Reads and discards what is left of a refused body (bounded by the request timeout), so the answer
 * reaches the client instead of a reset from closing a socket with unread data. A body still piped into
 * its decompression is unpiped first: the paused inflater would otherwise hold the connection, and every
 * request pipelined behind it, until the request timeout.
 */
function discardUnreadBody(request: IncomingMessage): void {
  if (request.readableEnded) return;
  request.unpipe();
  request.resume();
}

/** What any thrown value means for the client. Unknown failures become a bare 500: no detail leaves the process. */
export function toProblem(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (error instanceof PetRuleViolation) return new HttpProblem('invalid_body', error.message);
  if (error instanceof InvalidPetQuery) return new HttpProblem('invalid_query', error.message);
  if (error instanceof PetNotFound) return new HttpProblem('not_found', error.message);
  if (error instanceof IllegalStatusTransition) return new HttpProblem('illegal_transition', error.message);
  if (error instanceof OrderNotFound) return new HttpProblem('not_found', error.message);
  if (error instanceof IllegalOrderTransition) return new HttpProblem('illegal_transition', error.message);
  if (error instanceof PetNotAvailable) return new HttpProblem('pet_not_available', error.message);
  if (error instanceof UnknownPet) return new HttpProblem('unknown_pet', error.message);
  if (error instanceof PetReserved) return new HttpProblem('pet_reserved', error.message);
  if (error instanceof VersionMismatch) return new HttpProblem('version_mismatch', error.message);
  if (error instanceof IdempotencyKeyReused) return new HttpProblem('idempotency_key_reused', error.message);
  if (error instanceof WebhookLimitReached) return new HttpProblem('limit_reached', error.message);
  if (error instanceof GroupLimitReached) return new HttpProblem('limit_reached', error.message);
  if (error instanceof GroupNotFound) return new HttpProblem('not_found', error.message);
  if (error instanceof GroupRequestRefused) return new HttpProblem('invalid_body', error.message);
  if (error instanceof TooMuchContention) return new HttpProblem('unavailable', 'the pet kept changing; try again', { 'Retry-After': '0' });
  if (error instanceof StoreUnavailable) return new HttpProblem('unavailable', error.message, { 'Retry-After': String(error.retryAfterSeconds) });
  if (error instanceof StreamVersionConflict) return new HttpProblem('unavailable', 'a concurrent write got there first; try again', { 'Retry-After': '0' });
  const status = (error as { status?: unknown; expose?: unknown }).status;
  if (typeof status === 'number') {
    if (status === 413) return new HttpProblem('payload_too_large', 'the request body is larger than 64 KiB');
    if (status === 415) return new HttpProblem('unsupported_media_type', 'the request body encoding is not supported');
    if (status === 400) return new HttpProblem('invalid_body', 'the request body could not be read');
  }
  return new HttpProblem('internal', 'the service failed to answer this request');
}
