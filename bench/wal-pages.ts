// Which pages of the database a group of creations writes: `addPet` in groups of 64 on a copy of the
// seed, then each frame the groups appended to the write-ahead log is traced to its table or index by
// SQLite's `dbstat`. Every page a group writes is a 4 KiB frame (two writes) in its commit, and later
// a page copied back by a checkpoint: what a creation's rows cost beyond their CPU. With `orders`, the
// groups place orders instead, each for another available pet of the seed (from the 25,000th pet on,
// as `bench/store-orders.ts` does after its warm-up): what a placement's rows cost.
//   node --import tsx bench/wal-pages.ts [pets] [groups] [orders]
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { addPet, placeOrder } from '../application/index.ts';
import type { PetStatus } from '../domain/index.ts';
import { openSqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';
import { seededCopy, seedStatus } from './seed.ts';

const GROUP = 64;
const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const STATUSES: readonly (PetStatus | undefined)[] = ['available', 'pending', 'sold', undefined];

const pets = Number(process.argv[2] ?? 100_000);
const groups = Number(process.argv[3] ?? 20);
const orders = process.argv[4] === 'orders';
const directory = mkdtempSync(join(tmpdir(), 'petstore-wal-pages-'));
try {
  const file = await seededCopy(pets, join(directory, 'pets.db'));
  const store = await openSqlitePetStore(file);
  const available = orders ? Array.from({ length: pets }, (_, index) => index + 1).filter((id) => id >= 25_000 && seedStatus(id).now === 'available') : [];
  if (orders && available.length < (groups + 1) * GROUP) throw new Error(`${pets} pets have too few available for ${groups} groups of orders`);
  const group = (round: number) => Promise.all(Array.from({ length: GROUP }, (_, index) => (orders
    ? placeOrder(store, { petId: available[(round + 1) * GROUP + index]! })
    : addPet(store, { name: `wal ${round}-${index}`, categoryId: 1, ...statusOf(index) }))));
  await group(-1);
  const before = statSync(`${file}-wal`).size;
  const header = readFileSync(`${file}-wal`).subarray(0, WAL_HEADER_BYTES);
  for (let round = 0; round < groups; round++) await group(round);
  const wal = readFileSync(`${file}-wal`);
  await store.close();
  // A checkpoint (every 1,000 pages) starts the log again, with a new header, over the frames to be read.
  if (!wal.subarray(0, WAL_HEADER_BYTES).equals(header)) throw new Error(`the log was checkpointed during the ${groups} groups: ask for fewer`);

  const database = new Database(file, { readonly: true });
  const pageSize = database.pragma('page_size', { simple: true }) as number;
  const owners = new Map<number, string>();
  for (const row of database.prepare('select name, pageno, pagetype from dbstat').all() as { name: string; pageno: number; pagetype: string }[]) {
    owners.set(row.pageno, `${row.name} (${row.pagetype})`);
  }
  database.close();

  const written = new Map<string, number>();
  let frames = 0;
  for (let offset = Math.max(WAL_HEADER_BYTES, before); offset + FRAME_HEADER_BYTES <= wal.length; offset += FRAME_HEADER_BYTES + pageSize) {
    const owner = owners.get(wal.readUInt32BE(offset)) ?? 'other';
    written.set(owner, (written.get(owner) ?? 0) + 1);
    frames += 1;
  }
  process.stdout.write(`${groups} groups of ${GROUP} ${orders ? 'placements' : 'creations'} on ${pets} pets: ${(frames / groups).toFixed(1)} pages a group\n`);
  for (const [owner, count] of [...written].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${owner.padEnd(40)} ${(count / groups).toFixed(2)}\n`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}

function statusOf(index: number): { status?: PetStatus } {
  const status = STATUSES[index % STATUSES.length];
  return status === undefined ? {} : { status };
}
