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
//   node --import tsx bench/ceiling-server.ts <bodies.json> [--durable <file.db> [--event-sourced]]
// bodies.json: see bench/ceiling-bodies.mjs. Prints "listening <port>".
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Database from 'better-sqlite3';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { EVENTS, PETS, rowValues, sqliteInsert } from '../adapters/store/schema.ts';
import { JSON_TYPE, readCeilingBodies } from './ceiling-bodies.mjs';

const { gets, created } = readCeilingBodies(process.argv[2]!);
const durableFile = process.argv.indexOf('--durable') > 0 ? process.argv[process.argv.indexOf('--durable') + 1] : undefined;

type NewPet = { name: string; categoryId: number; status?: string };
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

/** Writes one turn's pets, inside the turn's transaction. */
type TurnRows = (db: Database.Database) => (pets: readonly NewPet[]) => void;

function onePetRow(db: Database.Database): (pets: readonly NewPet[]) => void {
  db.exec('create table if not exists pets (id integer primary key, name text not null, category_id integer not null, status text)');
  const insert = db.prepare('insert into pets (name, category_id, status) values (?, ?, ?)');
  return (pets) => {
    for (const pet of pets) insert.run(pet.name, pet.categoryId, pet.status ?? null);
  };
}

function eventSourcedRows(db: Database.Database): (pets: readonly NewPet[]) => void {
  // null for the pet's id and the event's position: SQLite takes the next rowid.
  const insertPet = db.prepare(sqliteInsert(PETS, 1));
  const insertEvent = db.prepare(sqliteInsert(EVENTS, 1));
  return (pets) => {
    const now = new Date().toISOString();
    for (const pet of pets) {
      const status = pet.status ?? null;
      const petRow = { id: null as unknown as number, name: pet.name, category_id: pet.categoryId, status, version: 1, created_at: now, updated_at: now };
      const id = Number(insertPet.run(rowValues(PETS, [petRow])).lastInsertRowid);
      const eventRow = {
        position: null as unknown as number, stream_id: `pet-${id}`, stream_version: 1, type: 'PetAdded', recorded_at: now,
        data: JSON.stringify({ id, name: pet.name, categoryId: pet.categoryId, status }),
        metadata: JSON.stringify({ schemaVersion: 1, recordedAt: now, requestId: randomUUID() }),
      };
      insertEvent.run(rowValues(EVENTS, [eventRow]));
    }
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
