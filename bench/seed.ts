import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentSchemaVersion } from '../application/index.ts';
import { migrations } from '../adapters/store/migrations.ts';
import { openSqlite } from '../adapters/store/sqlite/open-sqlite.ts';

/** Seeds are kept here between runs (git ignores it): a million pets take a while to write. */
export const SEED_DIRECTORY = fileURLToPath(new URL('.data', import.meta.url));

// Bump when the seed's content changes, so old files are not reused.
const SEED_VERSION = 1;
const NAMES = ['Rex', 'Tom', 'Bella', 'Luna', 'Max', 'Coco', 'Milo', 'Nala'];
const PETS_PER_TRANSACTION = 50_000;
const BASE_TIME = Date.parse('2026-11-21T00:00:00.000Z');

/**
 * The mix of statuses by id: half available, a fifth pending, a fifth sold (added available, then a
 * PetStatusChanged: the log holds 1.2 events a pet), a tenth with none.
 */
export function seedStatus(id: number): { added: 'available' | 'pending' | null; now: 'available' | 'pending' | 'sold' | null } {
  const slot = id % 10;
  if (slot < 5) return { added: 'available', now: 'available' };
  if (slot < 7) return { added: 'pending', now: 'pending' };
  if (slot < 9) return { added: 'available', now: 'sold' };
  return { added: null, now: null };
}

/** A file holding `pets` pets (ids 1..pets), written or taken from the cache; never written to by the benchmarks. */
export async function seededFile(pets: number): Promise<string> {
  const file = join(SEED_DIRECTORY, `pets-${pets}-s${SEED_VERSION}-m${Object.keys(migrations).length}.db`);
  if (existsSync(file)) return file;
  mkdirSync(SEED_DIRECTORY, { recursive: true });
  const partial = `${file}.partial`;
  removeDatabase(partial);
  await writeSeed(partial, pets);
  renameSync(partial, file);
  return file;
}

/** A private copy of a seed, for a benchmark that writes. */
export async function seededCopy(pets: number, into: string): Promise<string> {
  const source = await seededFile(pets);
  mkdirSync(dirname(into), { recursive: true });
  removeDatabase(into);
  copyFileSync(source, into);
  return into;
}

export function removeDatabase(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
}

/**
 * Writes the log and the read model directly, in bulk transactions of prepared statements, exactly as
 * the inline projection would have left them (the benchmark's projection verify proves it on small seeds).
 * Durability is off while seeding: the file is a throwaway fixture, checkpointed into one file at the end.
 */
async function writeSeed(file: string, pets: number): Promise<void> {
  const { db, database } = await openSqlite(file);
  const statement = (text: string) => database.prepare(text);
  statement('pragma synchronous = off').run([]);
  const begin = statement('begin immediate');
  const commit = statement('commit');
  const insertEvent = statement('insert into events (stream_id, stream_version, type, data, metadata, recorded_at) values (?, ?, ?, ?, ?, ?)');
  const insertPet = statement('insert into pets (id, name, category_id, status, version, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)');
  const addedMetadata = (at: string) => JSON.stringify({ schemaVersion: currentSchemaVersion('PetAdded'), recordedAt: at, requestId: 'seed', apiKeyId: 'seed' });
  const changedMetadata = (at: string) => JSON.stringify({ schemaVersion: currentSchemaVersion('PetStatusChanged'), recordedAt: at, requestId: 'seed', apiKeyId: 'seed' });
  try {
    for (let first = 1; first <= pets; first += PETS_PER_TRANSACTION) {
      const last = Math.min(pets, first + PETS_PER_TRANSACTION - 1);
      begin.run([]);
      const changed: number[] = [];
      for (let id = first; id <= last; id++) {
        const { added, now } = seedStatus(id);
        const name = `${NAMES[id % NAMES.length]} ${id}`;
        const categoryId = 1 + (id % 12);
        const at = new Date(BASE_TIME + id * 1000).toISOString();
        insertEvent.run([`pet-${id}`, 1, 'PetAdded', JSON.stringify({ id, name, categoryId, status: added }), addedMetadata(at), at]);
        const version = added === now ? 1 : 2;
        const updatedAt = version === 1 ? at : new Date(BASE_TIME + (pets + id) * 1000).toISOString();
        insertPet.run([id, name, categoryId, now, version, at, updatedAt]);
        if (version === 2) changed.push(id);
      }
      // The status changes come later in the log than the additions, as they would.
      for (const id of changed) {
        const at = new Date(BASE_TIME + (pets + id) * 1000).toISOString();
        insertEvent.run([`pet-${id}`, 2, 'PetStatusChanged', JSON.stringify({ id, from: 'available', to: 'sold' }), changedMetadata(at), at]);
      }
      commit.run([]);
    }
    statement("update sequences set value = ? where name = 'pet_id'").run([pets]);
    statement('pragma wal_checkpoint(truncate)').all([]);
  } finally {
    await db.destroy();
  }
}
