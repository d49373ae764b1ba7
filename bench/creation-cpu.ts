// The CPU a durable pet creation costs in process, through the use case and the SQLite store (one
// fsync a batch): `node --import tsx bench/creation-cpu.ts [rounds]`. Prints the median over rounds of
// the process's CPU time (user + system) a creation, and creations a second. Run it on two trees one
// after the other, alternating, to compare them on the same machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addPet } from '../application/index.ts';
import { openSqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';

const CONCURRENT = 32;
const BATCHES = 150;

const rounds = Number(process.argv[2] ?? 7);
const directory = mkdtempSync(join(tmpdir(), 'petstore-creation-cpu-'));
const store = await openSqlitePetStore(join(directory, 'bench.db'));
const batch = (round: number) => Promise.all(Array.from({ length: CONCURRENT }, (_, index) => addPet(store, { name: `bench ${round} ${index}`, categoryId: 1, status: 'available' })));
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
  console.log(`creation: ${median(cpu).toFixed(1)} µs CPU a creation, ${Math.round(median(rates))} creations/s (medians of ${rounds} rounds of ${CONCURRENT * BATCHES})`);
} finally {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
}
