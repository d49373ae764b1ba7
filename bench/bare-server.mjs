// The baseline under every framework: bare node:http answering each listing with its precomputed body
// (the service's answer, byte for byte) and a creation, once its JSON body is read and parsed, with the
// precomputed 201. No router, no middleware, no TypeScript loader: what one core serves at all with these
// bodies, and what a Node process that does so costs in memory.
//   node bench/bare-server.mjs <bodies.json>   (see bench/ceiling-bodies.mjs). Prints "listening <port>".
import { createServer } from 'node:http';
import { JSON_TYPE, readCeilingBodies } from './ceiling-bodies.mjs';

const { gets, created } = readCeilingBodies(process.argv[2]);

const server = createServer((request, response) => {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (path !== '/v1/pets') {
    response.writeHead(404).end();
    return;
  }
  if (request.method === 'GET') {
    const body = gets.get(query < 0 ? '' : url.slice(query + 1));
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': body.length }).end(body);
    return;
  }
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      response.writeHead(400).end();
      return;
    }
    response.writeHead(201, { 'content-type': JSON_TYPE, 'content-length': created.length }).end(created);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
