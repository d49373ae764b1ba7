import Koa from 'koa';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { PetStorePorts } from '../../application/index.ts';
import type { ApiKeyVerifier } from '../api-keys.ts';
import type { RateLimitPolicy } from '../config.ts';
import { HttpProblem, renderErrors } from './errors.ts';
import { createPetRouter } from './pet-routes.ts';
import { logRequests } from './request-log.ts';
import { requireHost } from './require-host.ts';

export interface HttpAppOptions {
  readonly ports: PetStorePorts;
  readonly verifier: ApiKeyVerifier;
  readonly publicBaseUrl: () => string;
  readonly logger: Logger;
  /** Per API key; none when undefined. */
  readonly rateLimit?: RateLimitPolicy | undefined;
}

/** The Koa application: request log (outermost, so it sees the final status), error rendering, Host check, routes. */
export function createHttpApp(options: HttpAppOptions): Koa {
  const app = new Koa();
  // Errors are rendered by our middleware; Koa's default handler would only log them to stderr again.
  app.silent = true;
  const router = createPetRouter(options);
  app.use(logRequests(options.logger));
  app.use(renderErrors(options.logger));
  app.use(requireHost);
  app.use(router.routes());
  app.use(async (ctx) => rejectUnrouted(ctx, router));
  return app;
}

/** A known path with another method is 405 with `Allow`, for any method name; anything else is 404. */
function rejectUnrouted(ctx: Context, router: Router): never {
  const matched = router.match(ctx.path, ctx.method).path;
  const allowed = new Set(matched.flatMap((layer) => layer.methods));
  if (allowed.size > 0) {
    const allow = [...allowed].join(', ');
    throw new HttpProblem('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { Allow: allow });
  }
  throw new HttpProblem('not_found', `no resource at ${ctx.path}`);
}
