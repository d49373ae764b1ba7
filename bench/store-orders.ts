// Placing an order (two streams, one commit) against a durable pet creation, in one process over one
// SQLite file, rounds alternating: `npm run bench:orders [-- rounds]`. Prints the medians of each's rate
// and of the process's CPU an operation, and the ratio of the rates (goal: orders ≥ 0.8× creations).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addPet, placeOrder } from '../application/index.ts';
import { openSqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';

const CONCURRENT = 32;
const BATCHES = 100;
const GOAL = 0.8;

const rounds = Number(process.argv[2] ?? 5);
const directory = mkdtempSync(join(tmpdir(), 'petstore-store-orders-'));
const store = await openSqlitePetStore(join(directory, 'bench.db'));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const createBatch = (label: string) => Promise.all(Array.from({ length: CONCURRENT }, (_, index) => addPet(store, { name: `${label} ${index}`, categoryId: 1, status: 'available' })));

/** Operations a second and CPU microseconds an operation, over `BATCHES` batches of `CONCURRENT` at once. */
async function measure(batch: (index: number) => Promise<unknown>): Promise<{ rate: number; cpuUs: number }> {
  const before = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < BATCHES; index++) await batch(index);
  const used = process.cpuUsage(before);
  const operations = CONCURRENT * BATCHES;
  return { rate: operations / ((performance.now() - started) / 1000), cpuUs: (used.user + used.system) / operations };
}

try {
  for (let warm = 0; warm < 20; warm++) await createBatch('warm');
  const creations: { rate: number; cpuUs: number }[] = [];
  const orders: { rate: number; cpuUs: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    // The pets the round orders, one order each: created beforehand, outside the measurement.
    const pets: number[] = [];
    for (let index = 0; index < BATCHES; index++) pets.push(...(await createBatch(`to order ${round}`)).map((pet) => pet.id));
    const measured = [
      () => measure(() => createBatch(`round ${round}`)).then((figure) => creations.push(figure)),
      () => measure((index) => Promise.all(pets.slice(index * CONCURRENT, (index + 1) * CONCURRENT).map((petId) => placeOrder(store, { petId })))).then((figure) => orders.push(figure)),
    ];
    // Alternating which goes first, so that neither always meets a fuller file or a warmer cache.
    for (const run of round % 2 === 0 ? measured : measured.reverse()) await run();
  }
  const creation = { rate: median(creations.map((figure) => figure.rate)), cpuUs: median(creations.map((figure) => figure.cpuUs)) };
  const order = { rate: median(orders.map((figure) => figure.rate)), cpuUs: median(orders.map((figure) => figure.cpuUs)) };
  const ratio = order.rate / creation.rate;
  console.log(`durable pet creation: ${Math.round(creation.rate)}/s, ${creation.cpuUs.toFixed(1)} µs CPU each`);
  console.log(`order placement (order and pet, one commit): ${Math.round(order.rate)}/s, ${order.cpuUs.toFixed(1)} µs CPU each`);
  console.log(`ratio ${ratio.toFixed(2)}× (goal ≥ ${GOAL}×: ${ratio >= GOAL ? 'met' : 'not met'}; medians of ${rounds} alternating rounds of ${CONCURRENT * BATCHES})`);
} finally {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
}
