// The rows the durable ceilings write a creation (bench/ceiling-server.ts), for the server and for
// bench/creation-cpu.ts, which runs the event-sourced ones in process beside the service's store.
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { EVENTS, PETS, rowValues, sqliteInsert } from '../adapters/store/schema.ts';

export type NewPet = { name: string; categoryId: number; status?: string };

/** Writes one turn's pets, inside the turn's transaction. */
export type TurnRows = (db: Database.Database) => (pets: readonly NewPet[]) => void;

/** The durable ceiling's: one row a pet in a one-table file. */
export function onePetRow(db: Database.Database): (pets: readonly NewPet[]) => void {
  db.exec('create table if not exists pets (id integer primary key, name text not null, category_id integer not null, status text)');
  const insert = db.prepare('insert into pets (name, category_id, status) values (?, ?, ?)');
  return (pets) => {
    for (const pet of pets) insert.run(pet.name, pet.categoryId, pet.status ?? null);
  };
}

/**
 * The event-sourced durable ceiling's, in a copy of the service's database: the pet's row under its
 * status index and its PetAdded event under the unique (stream, version) index, the pet's id and the
 * log's position from SQLite's rowids (a creation's stream is new by construction: nothing is read first).
 */
export function eventSourcedRows(db: Database.Database): (pets: readonly NewPet[]) => void {
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

/** A durable file as the service's store keeps it: WAL, `synchronous=FULL` (an fsync at each commit). */
export function openDurable(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}
