import Router from '@koa/router';
import type { Context } from 'koa';
import type { Registry } from 'prom-client';
import { HttpProblem } from './errors.ts';

export type ReadinessCheck = () => Promise<{ readonly ready: true } | { readonly ready: false; readonly reason: string }>;

/** Liveness, readiness and (when enabled) Prometheus metrics, outside /v1 and without a key. */
export function createProbeRouter(options: { readiness: ReadinessCheck; metrics: Registry | undefined }): Router {
  const router = new Router({ strict: true, sensitive: true });

  // Alive: the process answers HTTP. Nothing else is checked, so a slow database never gets it restarted.
  // /healthz is the older name Kubernetes deprecated, kept for probes configured with it.
  const alive = (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  };
  router.get('livez', '/livez', alive);
  router.get('healthz', '/healthz', alive);

  router.get('readyz', '/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const readiness = await options.readiness();
    if (!readiness.ready) throw new HttpProblem('unavailable', `not ready: ${readiness.reason}`, { 'Retry-After': '1' });
    ctx.body = { status: 'ready' };
  });

  const registry = options.metrics;
  if (registry) {
    router.get('metrics', '/metrics', async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.type = registry.contentType;
      ctx.body = await registry.metrics();
    });
  }

  return router;
}
