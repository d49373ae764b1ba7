import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { HttpProblem } from '../pipeline/errors.ts';
import { stateOf } from '../pipeline/request-state.ts';
import type { RequestState, Route } from '../pipeline/request-state.ts';

/** What a guard needs to know of the route a request is for: its template (the log line and metrics name it), its key rule, its marks. */
export type GuardedRoute = Pick<Route, 'template' | 'keyed' | 'marks'>;

/** A preflight answered by a guard itself: a status with no body, the guard's headers already added. */
export interface GuardAnswer {
  readonly status: number;
}

/** Let through (undefined), refused, or answered by the guard. */
export type GuardVerdict = undefined | HttpProblem | GuardAnswer;

/**
 * A check made before any route answers. It decides on the request's state (so a verdict is reached
 * once, whichever way the request is answered), adds the headers it puts on every answer
 * (`addAnswerHeader`), and refuses with an `HttpProblem`. A verdict that needs the database comes as a promise.
 * `route` is undefined for a path no route serves (a guard may still answer, as CORS answers a preflight).
 */
export type Guard = (request: IncomingMessage, response: ServerResponse, state: RequestState, route: GuardedRoute | undefined) => GuardVerdict | Promise<GuardVerdict>;

/** Runs the guards in order until one refuses or answers; without a promise while each decides at once. */
export function runGuards(
  guards: readonly Guard[], request: IncomingMessage, response: ServerResponse, state: RequestState, route: GuardedRoute | undefined, from = 0,
): GuardVerdict | Promise<GuardVerdict> {
  for (let index = from; index < guards.length; index++) {
    const verdict = guards[index]!(request, response, state, route);
    if (verdict instanceof Promise) {
      return verdict.then((settled) => (settled === undefined ? runGuards(guards, request, response, state, route, index + 1) : settled));
    }
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

/**
 * The guards as the Koa app's one middleware before its routes: the route is the one the pipeline
 * found for the request. A refusal is thrown for `renderErrors`; a guard's own answer ends the chain.
 */
export function guardRoutes(guards: readonly Guard[]) {
  // Not async: a verdict reached at once costs no promise of its own.
  return function guardRoutesMiddleware(ctx: Context, next: Next): Promise<void> {
    const state = stateOf(ctx);
    const route = state.matched?.route;
    state.route = route?.template ?? state.route;
    const verdict = runGuards(guards, ctx.req, ctx.res, state, route);
    if (verdict instanceof Promise) return verdict.then((settled) => pass(ctx, settled, next));
    return pass(ctx, verdict, next);
  };
}

function pass(ctx: Context, verdict: GuardVerdict, next: Next): Promise<void> {
  if (verdict === undefined) return next();
  if (verdict instanceof HttpProblem) throw verdict;
  ctx.status = verdict.status;
  return Promise.resolve();
}

/**
 * For a pipeline branch that serves `route`: runs the guards, true when they let the request through.
 * Anything else (a refusal, a guard's own answer, a guard's failure) is the app's to send: it runs the same guards, whose
 * verdicts the request's state keeps, so nothing is decided or counted twice.
 */
export function admitted(guards: readonly Guard[], request: IncomingMessage, response: ServerResponse, state: RequestState): boolean | Promise<boolean> {
  const route = state.matched!.route;
  state.route = route.template;
  const verdict = runGuards(guards, request, response, state, route);
  // A guard that failed (the key table unreadable) is the app's to answer too: its renderer turns the failure into a 503.
  return verdict instanceof Promise ? verdict.then((settled) => settled === undefined, () => false) : verdict === undefined;
}
