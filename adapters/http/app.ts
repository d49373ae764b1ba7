import Koa from 'koa';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { PetStorePorts } from '../../application/index.ts';
import type { ApiKeyVerifier } from '../api-keys.ts';
import type { ListingCache } from './listing-cache.ts';
import { HttpProblem, renderErrors } from './errors.ts';
import { createPetRouter } from './pet-routes.ts';
import { logRequests } from './request-log.ts';

export interface HttpAppOptions {
  readonly ports: PetStorePorts;
  readonly verifier: ApiKeyVerifier;
  readonly publicBaseUrl: () => string;
  readonly logger: Logger;
  readonly listingCache?: ListingCache | undefined;
}

export interface HttpApp {
  readonly app: Koa;
  /** The methods a path answers to (empty for an unknown path). */
  methodsAllowedAt(path: string): string[];
}

/** The Koa application: request log (outermost, so it sees the final status), error rendering, routes. */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Koa();
  // Errors are rendered by our middleware; Koa's default handler would only log them to stderr again.
  app.silent = true;
  const router = createPetRouter(options);
  const methodsAllowedAt = (path: string) => [...new Set(router.match(path, 'GET').path.flatMap((layer) => layer.methods))];
  app.use(logRequests(options.logger));
  app.use(renderErrors(options.logger));
  app.use(requireHost);
  app.use(router.routes());
  app.use(async (ctx) => rejectUnrouted(ctx, methodsAllowedAt));
  return { app, methodsAllowedAt };
}

/** HTTP/1.1 requires a Host header (RFC 9112 §3.2); Node was told not to refuse it so we can answer in our shape. */
function requireHost(ctx: Context, next: Next): Promise<void> {
  if (ctx.req.httpVersion === '1.1' && !ctx.get('host')) throw new HttpProblem('invalid_header', 'the Host header is required');
  return next();
}

/** A known path with another method is 405 with `Allow`, for any method name; anything else is 404. */
function rejectUnrouted(ctx: Context, methodsAllowedAt: (path: string) => string[]): never {
  const allowed = methodsAllowedAt(ctx.path);
  if (allowed.length > 0) {
    const allow = allowed.join(', ');
    throw new HttpProblem('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { Allow: allow });
  }
  throw new HttpProblem('not_found', `no resource at ${ctx.path}`);
}
