import type { Context, Next } from 'koa';
import { HttpProblem } from './errors.ts';
import { stateOf } from './request-pipeline.ts';
import type { RequestState } from './request-pipeline.ts';

// Like the parser's own rejections, these end the connection: the client's framing is not to be trusted.
const CLOSE = { Connection: 'close' };

/** RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host header is answered 400. */
export function hostProblem(state: RequestState, httpVersion: string): HttpProblem | undefined {
  if (state.hosts > 1) return new HttpProblem('invalid_header', 'a request carries one Host header, not several', CLOSE);
  if (state.hosts === 0 && httpVersion === '1.1') return new HttpProblem('invalid_header', 'an HTTP/1.1 request must carry a Host header', CLOSE);
  return undefined;
}

// Not async: a promise of its own on every request is measurable on the listing's hot path.
export function requireHost(ctx: Context, next: Next): Promise<void> {
  const problem = hostProblem(stateOf(ctx), ctx.req.httpVersion);
  if (problem) throw problem;
  return next();
}
