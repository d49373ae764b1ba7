import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { HttpProblem } from '../pipeline/errors.ts';

/**
 * The API reference page: Swagger UI from the installed swagger-ui-dist package (the service may have
 * no internet, so no CDN), pointed at the OpenAPI document beside it. Relative addresses keep it
 * working behind a proxy that serves the API under another prefix.
 */
export const REFERENCE_PAGE_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Pet Store API reference</title>
    <link rel="stylesheet" href="docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="docs/favicon-32x32.png">
    <style>
      .stability-badge { margin-left: 10px; padding: 1px 8px; border-radius: 4px; font: 600 12px sans-serif; text-transform: uppercase; white-space: nowrap; }
      .stability-experimental { background: #fff3cd; color: #7a5a00; border: 1px solid #e0c060; }
      .stability-deprecated { background: #eeeeee; color: #555555; border: 1px solid #bbbbbb; }
    </style>
  </head>
  <body>
    <div id="reference"></div>
    <script src="docs/swagger-ui-bundle.js"></script>
    <script src="docs/reference-page.js"></script>
  </body>
</html>
`;

// Swagger UI strikes a deprecated operation through and shows \`x-stability\` only inside an opened
// operation: a badge beside each path names its stability (experimental, deprecated) at a glance.
const START_SCRIPT = `const StabilityBadges = () => ({
  wrapComponents: {
    OperationSummaryPath: (Original, system) => (props) => {
      const React = system.React;
      // Read from the document itself: an operation is resolved (its \`op\` filled) only once opened.
      const operation = props.operationProps;
      const spec = system.specSelectors.specJson();
      const where = [operation.get('path'), operation.get('method'), 'x-stability'];
      const experimental = spec.getIn(['paths', ...where]) || spec.getIn(['webhooks', ...where]);
      const stability = experimental || (operation.get('deprecated') ? 'deprecated' : undefined);
      const path = React.createElement(Original, props);
      if (!stability) return path;
      const badge = React.createElement('span', { className: 'stability-badge stability-' + stability, title: 'x-stability: ' + stability }, stability);
      return React.createElement(React.Fragment, null, path, badge);
    },
  },
});

window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  displayOperationId: true,
  showExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  plugins: [StabilityBadges],
  layout: 'BaseLayout',
});
`;

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

const swaggerUiFolder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// The only files served: a fixed list, so no request can name another file.
const ASSET_SOURCES: Record<string, { type: string; load: () => Promise<Buffer> }> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', load: () => readFile(join(swaggerUiFolder, 'swagger-ui.css')) },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', load: () => readFile(join(swaggerUiFolder, 'swagger-ui-bundle.js')) },
  'favicon-32x32.png': { type: 'image/png', load: () => readFile(join(swaggerUiFolder, 'favicon-32x32.png')) },
  'reference-page.js': { type: 'text/javascript; charset=utf-8', load: async () => Buffer.from(START_SCRIPT) },
};

const loaded = new Map<string, Promise<Asset>>();

/** One of the page's files, read once; 404 for any other name. */
export function referencePageAsset(name: string): Promise<Asset> {
  const source = Object.hasOwn(ASSET_SOURCES, name) ? ASSET_SOURCES[name] : undefined;
  if (!source) return Promise.reject(new HttpProblem('not_found', `no resource at /v1/docs/${name}`));
  let asset = loaded.get(name);
  if (!asset) {
    asset = source.load().then((body) => ({ type: source.type, body }));
    loaded.set(name, asset);
  }
  return asset;
}
