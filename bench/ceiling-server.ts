// The ceiling the service is measured against: the same Koa 3 and @koa/router, answering each route with
// a precomputed body of the same size as the service's answer, and no other middleware. POST reads and
// parses the JSON body first (koa-body), then answers its precomputed 201.
//   node --import tsx bench/ceiling-server.ts <bodies.json>
// bodies.json: { "gets": { "<query string>": "<base64 body>" }, "post": "<base64 body>" }. Prints "listening <port>".
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';

interface CeilingBodies {
  readonly gets: Record<string, string>;
  readonly post: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const bodies = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CeilingBodies;
const gets = new Map(Object.entries(bodies.gets).map(([query, body]) => [query, Buffer.from(body, 'base64')]));
const created = Buffer.from(bodies.post, 'base64');

const app = new Koa();
const router = new Router();
router.get('/v1/pets', (ctx) => {
  const body = gets.get(ctx.querystring);
  if (!body) return;
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = body;
});
router.post('/v1/pets', koaBody({ json: true, text: false, urlencoded: false, multipart: false }), (ctx) => {
  ctx.status = 201;
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = created;
});
app.use(router.routes());

const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
