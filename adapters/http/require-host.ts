import type { Context, Next } from 'koa';
import { stateOf } from './request-state.ts';

/** Refuses what the Host rule, decided when the request began (`request-state.ts`), refused. */
// Not async: a promise of its own on every request is measurable on the listing's hot path.
export function requireHost(ctx: Context, next: Next): Promise<void> {
  const problem = stateOf(ctx).hostProblem;
  if (problem) throw problem;
  return next();
}
