// The CPU a durable pet creation costs in process, through the use case and the SQLite store (one
// fsync a batch): `node --import tsx bench/creation-cpu.ts [rounds] [--ceiling]`. Prints the median over
// rounds of the process's CPU time (user + system) a creation, and creations a second. With --ceiling,
// the event-sourced durable ceiling's rows (bench/ceiling-rows.ts) in batches of the same size instead,
// committed the same way: what the store and the use case add to the rows. Both on a copy of the 10,000 pets.
// Run it on two trees one after the other, alternating, to compare them on the same machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addPet } from '../application/index.ts';
import { openSqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';
import { eventSourcedRows, openDurable } from './ceiling-rows.ts';
import type { NewPet } from './ceiling-rows.ts';
import { seededCopy } from './seed.ts';

const CONCURRENT = 32;
const BATCHES = 150;

const rounds = Number(process.argv[2] ?? 7);
const ceiling = process.argv.includes('--ceiling');
const directory = mkdtempSync(join(tmpdir(), 'petstore-creation-cpu-'));
const newPet = (round: number, index: number): NewPet => ({ name: `bench ${round} ${index}`, categoryId: 1, status: 'available' });
const { batch, close } = ceiling ? await ceilingRows() : await serviceStore();
try {
  for (let warm = 0; warm < 50; warm++) await batch(-1);
  const cpu: number[] = [];
  const rates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage();
    const started = performance.now();
    for (let index = 0; index < BATCHES; index++) await batch(round);
    const used = process.cpuUsage(before);
    const creations = CONCURRENT * BATCHES;
    cpu.push((used.user + used.system) / creations);
    rates.push(creations / ((performance.now() - started) / 1000));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`${ceiling ? 'ceiling rows' : 'creation'}: ${median(cpu).toFixed(1)} µs CPU a creation, ${Math.round(median(rates))} creations/s (medians of ${rounds} rounds of ${CONCURRENT * BATCHES})`);
} finally {
  await close();
  rmSync(directory, { recursive: true, force: true });
}

/** Creations through the use case and the store, `CONCURRENT` at a time (one batch). */
async function serviceStore() {
  const store = await openSqlitePetStore(await seededCopy(10_000, join(directory, 'bench.db')));
  return {
    batch: (round: number) => Promise.all(Array.from({ length: CONCURRENT }, (_, index) => addPet(store, newPet(round, index)))),
    close: () => store.close(),
  };
}

/** The ceiling's rows of `CONCURRENT` creations in one transaction, each body parsed as the ceiling's koa-body does. */
async function ceilingRows() {
  const db = openDurable(await seededCopy(10_000, join(directory, 'ceiling.db')));
  const commit = db.transaction(eventSourcedRows(db));
  return {
    batch: async (round: number) => commit(Array.from({ length: CONCURRENT }, (_, index) => JSON.parse(JSON.stringify(newPet(round, index))) as NewPet)),
    close: async () => db.close(),
  };
}
