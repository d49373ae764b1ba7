import type { Context, Next } from 'koa';
import { HttpProblem } from './errors.ts';

// Like the parser's own rejections, these end the connection: the client's framing is not to be trusted.
const CLOSE = { Connection: 'close' };

/** RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host header is answered 400. */
// Not async: a promise of its own on every request is measurable on the listing's hot path.
export function requireHost(ctx: Context, next: Next): Promise<void> {
  const hosts = countHostHeaders(ctx.req.rawHeaders);
  if (hosts > 1) throw new HttpProblem('invalid_header', 'a request carries one Host header, not several', CLOSE);
  if (hosts === 0 && ctx.req.httpVersion === '1.1') throw new HttpProblem('invalid_header', 'an HTTP/1.1 request must carry a Host header', CLOSE);
  return next();
}

/** How many Host fields a request carries; counted in place, with no array built on the hot path. */
export function countHostHeaders(rawHeaders: readonly string[]): number {
  let hosts = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]!.length === 4 && rawHeaders[index]!.toLowerCase() === 'host') hosts++;
  return hosts;
}
