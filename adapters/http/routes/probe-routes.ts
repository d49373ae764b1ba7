import { HttpProblem } from '../pipeline/errors.ts';
import { declareRoutes } from '../pipeline/route-table.ts';
import type { Route, RouteContext } from '../pipeline/request-state.ts';

export type ReadinessCheck = () => Promise<{ readonly ready: true } | { readonly ready: false; readonly reason: string }>;

export interface MetricsExposition {
  readonly contentType: string;
  exposition(): Promise<string>;
}

/** Liveness, readiness and (when enabled) Prometheus metrics, outside /v1 and without a key. */
export function createProbeRoutes(options: { readiness: ReadinessCheck; metrics: MetricsExposition | undefined }): readonly Route[] {
  const router = declareRoutes({ keyed: false });

  // Alive: the process answers HTTP. Nothing else is checked, so a slow database never gets it restarted.
  // /healthz is the older name Kubernetes deprecated, kept for probes configured with it.
  const alive = (ctx: RouteContext) => {
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

  const metrics = options.metrics;
  if (metrics) {
    router.get('metrics', '/metrics', async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      let text: string;
      try {
        text = await metrics.exposition();
      } catch {
        // Only workers gather: a worker that is starting again answers no one for a moment.
        throw new HttpProblem('unavailable', 'the metrics of every worker could not be gathered; try again', { 'Retry-After': '1' });
      }
      ctx.type = metrics.contentType;
      ctx.body = text;
    });
  }

  return router.routes;
}
