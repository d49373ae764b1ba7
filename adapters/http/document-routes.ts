import Router from '@koa/router';
import type { OpenApiDocument } from '../../contract/openapi-document.ts';
import { REFERENCE_PAGE_HTML, referencePageAsset } from './reference-page.ts';

/** The OpenAPI document and the reference page that shows it; no key needed. */
export function createDocumentRouter(options: { document: () => OpenApiDocument }): Router {
  const router = new Router({ strict: true, sensitive: true });

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

  return router;
}
