// The ceilings the service is measured against: the same Koa 3 and @koa/router, answering each route with
// a precomputed body of the same size as the service's answer, and no other middleware. POST reads and
// parses the JSON body first (koa-body), then answers its precomputed 201.
// With --durable, POST also commits the pet to a one-table SQLite file before its 201 (WAL,
// synchronous=FULL, as the service's store; the POSTs of one event-loop turn share one transaction):
// the durable ceiling, what any service that acknowledges only durable writes can reach on this stack.
// With --creation-rows as well, <file.db> is a copy of the service's database and each turn writes what
// the service's creations write, in one transaction: the pet ids drawn from the sequence, the new
// streams' versions read, each pet's row and its PetAdded event (data and metadata as JSON). What the
// event-sourced rows alone cost, with none of the service's checks.
//   node --import tsx bench/ceiling-server.ts <bodies.json> [--durable <file.db> [--creation-rows]]
// bodies.json: { "gets": { "<query string>": "<base64 body>" }, "post": "<base64 body>" }. Prints "listening <port>".
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Database from 'better-sqlite3';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { EVENTS, PETS, sqliteInsert } from '../adapters/store/schema.ts';
import { SQLITE_STREAM_VERSIONS } from '../adapters/store/sql-event-log.ts';

interface CeilingBodies {
  readonly gets: Record<string, string>;
  readonly post: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const bodies = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CeilingBodies;
const gets = new Map(Object.entries(bodies.gets).map(([query, body]) => [query, Buffer.from(body, 'base64')]));
const created = Buffer.from(bodies.post, 'base64');
const durableFile = process.argv.indexOf('--durable') > 0 ? process.argv[process.argv.indexOf('--durable') + 1] : undefined;

type NewPet = { name: string; categoryId: number; status?: string };
/** Commits `pet` with the others of this turn; resolves once their transaction has. */
const commit = durableFile === undefined ? undefined : turnCommitter(durableFile, process.argv.includes('--creation-rows') ? creationRows : onePetRow);

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

/** Writes one turn's pets, inside the turn's transaction. */
type TurnRows = (db: Database.Database) => (pets: readonly NewPet[]) => void;

function onePetRow(db: Database.Database): (pets: readonly NewPet[]) => void {
  db.exec('create table if not exists pets (id integer primary key, name text not null, category_id integer not null, status text)');
  const insert = db.prepare('insert into pets (name, category_id, status) values (?, ?, ?)');
  return (pets) => {
    for (const pet of pets) insert.run(pet.name, pet.categoryId, pet.status ?? null);
  };
}

function creationRows(db: Database.Database): (pets: readonly NewPet[]) => void {
  const lastId = db.prepare("select value from sequences where name = 'pet_id'").pluck();
  const takeIds = db.prepare("update sequences set value = ? where name = 'pet_id'");
  const lastPosition = db.prepare('select coalesce(max(position), 0) from events').pluck();
  const streamVersions = db.prepare(SQLITE_STREAM_VERSIONS);
  const insertPet = db.prepare(sqliteInsert(PETS, 1));
  const insertEvent = db.prepare(sqliteInsert(EVENTS, 1));
  return (pets) => {
    const now = new Date().toISOString();
    const first = (lastId.get() as number) + 1;
    takeIds.run(first + pets.length - 1);
    let position = lastPosition.get() as number;
    streamVersions.all(JSON.stringify(pets.map((_, index) => `pet-${first + index}`)));
    pets.forEach((pet, index) => {
      const id = first + index;
      const status = pet.status ?? null;
      insertPet.run(id, pet.name, pet.categoryId, status, 1, now, now);
      const data = JSON.stringify({ id, name: pet.name, categoryId: pet.categoryId, status });
      insertEvent.run(++position, `pet-${id}`, 1, 'PetAdded', data, JSON.stringify({ recordedAt: now, requestId: randomUUID() }), now);
    });
  };
}

function turnCommitter(file: string, rows: TurnRows): (pet: NewPet) => Promise<void> {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
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
