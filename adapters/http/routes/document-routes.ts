import type { OpenApiDocument } from '../../../contract/openapi-document.ts';
import { REFERENCE_PAGE_HTML, referencePageAsset } from './reference-page.ts';
import { declareRoutes } from '../pipeline/route-table.ts';
import type { Route, RouteContext } from '../pipeline/request-state.ts';

/** The addresses a person tries first: each leads to the reference page. */
export const LANDING_PATHS = ['/', '/v1', '/v1/'] as const;

/** The OpenAPI document and the reference page that shows it; no key needed. */
export function createDocumentRoutes(options: { document: () => OpenApiDocument; publicBaseUrl: () => string }): readonly Route[] {
  const router = declareRoutes({ keyed: false });

  for (const path of LANDING_PATHS) {
    router.get('landing', path, (ctx) => {
      // 302: where the reference lives may move; the base address printed at start stays. No body: every
      // body this service writes is JSON or the page itself, and a redirect needs none.
      ctx.body = null; // before the status: Koa turns a null body set after it into 204
      ctx.status = 302;
      ctx.set('Location', `${options.publicBaseUrl()}/docs`);
    });
  }

  router.get('openApiDocument', '/v1/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = options.document();
  });

  router.get('referencePage', '/v1/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = REFERENCE_PAGE_HTML;
  });

  router.get('referencePageAsset', '/v1/docs/:asset', async (ctx) => {
    const asset = await referencePageAsset(ctx.params.asset!);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = asset.type;
    ctx.body = asset.body;
  });

  return router.routes;
}
