import type { Context, Next } from 'koa';
import { HttpProblem } from './errors.ts';

// Like the parser's own rejections, these end the connection: the client's framing is not to be trusted.
const CLOSE = { Connection: 'close' };

/** RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host header is answered 400. */
// Not async: a promise of its own on every request is measurable on the listing's hot path.
export function requireHost(ctx: Context, next: Next): Promise<void> {
  const hosts = ctx.req.rawHeaders.filter((value, index) => index % 2 === 0 && value.toLowerCase() === 'host').length;
  if (hosts > 1) throw new HttpProblem('invalid_header', 'a request carries one Host header, not several', CLOSE);
  if (hosts === 0 && ctx.req.httpVersion === '1.1') throw new HttpProblem('invalid_header', 'an HTTP/1.1 request must carry a Host header', CLOSE);
  return next();
}
