// The ceilings the service is measured against: the same Koa 3 and @koa/router, answering each route with
// a precomputed body of the same size as the service's answer, and no other middleware. POST reads and
// parses the JSON body first (koa-body), then answers its precomputed 201.
// With --durable, POST also commits the pet to a one-table SQLite file before its 201 (WAL,
// synchronous=FULL, as the service's store; the POSTs of one event-loop turn share one transaction):
// the durable ceiling, what any service that acknowledges only durable writes can reach on this stack.
// With --event-sourced as well, <file.db> is a copy of the service's database and each turn writes what a
// creation must write at least, in one transaction: the pet's row under its status index and its PetAdded
// event under the unique (stream, version) index, the pet's id and the log's position from SQLite's rowids
// (a creation's stream is new by construction, so nothing is read first). The event-sourced durable ceiling.
// The rows are bench/ceiling-rows.ts's.
//   node --import tsx bench/ceiling-server.ts <bodies.json> [--durable <file.db> [--event-sourced]]
// bodies.json: see bench/ceiling-bodies.mjs. Prints "listening <port>".
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { eventSourcedRows, onePetRow, openDurable } from './ceiling-rows.ts';
import type { NewPet, TurnRows } from './ceiling-rows.ts';
import { JSON_TYPE, readCeilingBodies } from './ceiling-bodies.mjs';

const { gets, created } = readCeilingBodies(process.argv[2]!);
const durableFile = process.argv.indexOf('--durable') > 0 ? process.argv[process.argv.indexOf('--durable') + 1] : undefined;

/** Commits `pet` with the others of this turn; resolves once their transaction has. */
const commit = durableFile === undefined ? undefined : turnCommitter(durableFile, process.argv.includes('--event-sourced') ? eventSourcedRows : onePetRow);

const app = new Koa();
const router = new Router();
router.get('/v1/pets', (ctx) => {
  const body = gets.get(ctx.querystring);
  if (!body) return;
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = body;
});
router.post('/v1/pets', koaBody({ json: true, text: false, urlencoded: false, multipart: false }), async (ctx) => {
  if (commit) await commit(ctx.request.body as NewPet);
  ctx.status = 201;
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = created;
});
app.use(router.routes());

function turnCommitter(file: string, rows: TurnRows): (pet: NewPet) => Promise<void> {
  const db = openDurable(file);
  const commitTurn = db.transaction(rows(db));
  let turn: { pets: NewPet[]; done: Promise<void> } | undefined;
  return (pet) => {
    if (turn === undefined) {
      const pets: NewPet[] = [];
      turn = {
        pets,
        done: new Promise<void>((resolve, reject) => setImmediate(() => {
          turn = undefined;
          try {
            commitTurn(pets);
            resolve();
          } catch (error) {
            reject(error as Error);
          }
        })),
      };
    }
    turn.pets.push(pet);
    return turn.done;
  };
}

const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
