// Placing an order (an order and its pet, two streams in one commit) against a durable pet creation,
// both over HTTP on the same service, in rounds that alternate which goes first: a scenario of
// `npm run bench`, or alone: `npm run bench:orders [-- rounds] [--pets 100000] [--seconds 3]`. Each placement orders another available
// pet of the seed. `npm run bench:orders -- --in-process [rounds]`: the same two use cases called in one
// process over one SQLite file, without HTTP (what the write path alone costs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addPet, placeOrder } from '../application/index.ts';
import { openSqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';
import { canPin, cpuMicroseconds, headers, median, startLoadClient, startService, stop } from './http-load.ts';
import type { Started } from './http-load.ts';
import type { LoadJob } from './load-client.ts';
import { seededCopy, seedStatus } from './seed.ts';

/** Placing an order should reach this share of a durable creation's rate. */
export const PLACEMENT_GOAL = 0.8;

export interface PlacementBenchOptions {
  /** The seed's size: each placement takes one of its available pets (half of them), so it bounds the requests. */
  readonly pets: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly log: (line: string) => void;
}

/** One kind of request's figures over the rounds. */
export interface RequestFigures {
  /** req/s of each round, in the order run. */
  readonly rounds: readonly number[];
  readonly median: number;
  readonly latencyP99Ms: number;
  /** The service's CPU (user + system) over the requests answered, median over the rounds. */
  readonly cpuPerRequestUs: number;
}

export interface PlacementFigures {
  readonly pets: number;
  readonly connections: number;
  readonly seconds: number;
  readonly creation: RequestFigures;
  readonly placement: RequestFigures;
  /** The placements' median req/s over the creations'. */
  readonly ratio: number;
  readonly goal: number;
}

const CREATION = { method: 'POST', path: '/v1/pets', body: '{"name":"Bench","categoryId":1,"status":"available"}' } as const;
const PET_ID = '<petId>';

/** The ids of the seed's available pets, the ones an order can be placed for. */
function availablePets(pets: number): number[] {
  const ids: number[] = [];
  for (let id = 1; id <= pets; id++) if (seedStatus(id).now === 'available') ids.push(id);
  return ids;
}

export async function runPlacementBench(options: PlacementBenchOptions): Promise<PlacementFigures> {
  const { pets, rounds, seconds, warmupSeconds, connections, log } = options;
  const pin = canPin();
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-orders-'));
  const client = startLoadClient(pin);
  let service: Started | undefined;
  try {
    service = await startService(await seededCopy(pets, join(directory, 'petstore.db')), directory, pin);
    const origin = service.origin;
    const pid = service.child.pid!;
    // Each placement run (the warm-up and every round) gets its own share of the available pets and ends early
    // when it has used them up, so a fast machine never orders a pet twice.
    const pool = availablePets(pets);
    const share = Math.floor(pool.length / (rounds + 1));
    if (share < connections) throw new Error(`placement: ${pool.length} available pets is too few for ${rounds + 1} runs of ${connections} connections (seed more than ${pets})`);
    let placementsRun = 0;
    const jobs: Record<'creation' | 'placement', () => LoadJob> = {
      creation: () => ({ url: origin + CREATION.path, method: 'POST', body: CREATION.body, headers, connections, seconds }),
      placement: () => ({
        url: `${origin}/v1/store/orders`, method: 'POST', headers, connections, seconds,
        bodies: { template: `{"petId":${PET_ID}}`, placeholder: PET_ID, values: pool.slice(share * placementsRun, share * ++placementsRun) },
      }),
    };
    const results: Record<'creation' | 'placement', { requestsPerSecond: number; latencyP99Ms: number; cpuPerRequestUs: number }[]> = { creation: [], placement: [] };
    const run = async (which: 'creation' | 'placement', measured: boolean, runSeconds: number) => {
      const job = { ...jobs[which](), seconds: runSeconds };
      const before = cpuMicroseconds(pid);
      const result = await client.run(job);
      const cpuPerRequestUs = (cpuMicroseconds(pid) - before) / result.total;
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${which}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      if (measured) results[which].push({ requestsPerSecond: result.requestsPerSecond, latencyP99Ms: result.latencyP99Ms, cpuPerRequestUs });
      return { result, cpuPerRequestUs };
    };
    for (const which of ['creation', 'placement'] as const) await run(which, false, warmupSeconds);
    for (let round = 0; round < rounds; round++) {
      // Alternating which goes first, so that neither always meets a fuller file or a warmer cache.
      for (const which of round % 2 === 0 ? ['creation', 'placement'] as const : ['placement', 'creation'] as const) {
        const { result, cpuPerRequestUs } = await run(which, true, seconds);
        log(`round ${round + 1}/${rounds} ${which === 'creation' ? 'POST /v1/pets (durable)' : 'POST /v1/store/orders'}: ${Math.round(result.requestsPerSecond)} req/s, ${cpuPerRequestUs.toFixed(1)} µs CPU a request`);
      }
    }
    const figures = (which: 'creation' | 'placement'): RequestFigures => ({
      rounds: results[which].map((each) => each.requestsPerSecond),
      median: median(results[which].map((each) => each.requestsPerSecond)),
      latencyP99Ms: median(results[which].map((each) => each.latencyP99Ms)),
      cpuPerRequestUs: median(results[which].map((each) => each.cpuPerRequestUs)),
    });
    const creation = figures('creation');
    const placement = figures('placement');
    const ratio = placement.median / creation.median;
    log(`order placement: ${Math.round(placement.median)} req/s, ${placement.cpuPerRequestUs.toFixed(1)} µs CPU a request; durable creation ${Math.round(creation.median)} req/s, ` +
      `${creation.cpuPerRequestUs.toFixed(1)} µs; ratio ${ratio.toFixed(2)}× (goal ≥ ${PLACEMENT_GOAL}×, medians of ${rounds} alternating rounds)`);
    return { pets, connections, seconds, creation, placement, ratio, goal: PLACEMENT_GOAL };
  } finally {
    client.stop();
    if (service) await stop(service);
    rmSync(directory, { recursive: true, force: true });
  }
}

const CONCURRENT = 32;
const BATCHES = 100;

/** The two use cases in one process over one SQLite file, `CONCURRENT` at a time: their rates and CPU an operation. */
async function runInProcess(rounds: number): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-store-orders-'));
  const store = await openSqlitePetStore(join(directory, 'bench.db'));
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
      for (const run of round % 2 === 0 ? measured : measured.reverse()) await run();
    }
    const of = (figures: { rate: number; cpuUs: number }[]) => ({ rate: median(figures.map((figure) => figure.rate)), cpuUs: median(figures.map((figure) => figure.cpuUs)) });
    const creation = of(creations);
    const order = of(orders);
    console.log(`in process, durable pet creation: ${Math.round(creation.rate)}/s, ${creation.cpuUs.toFixed(1)} µs CPU each`);
    console.log(`in process, order placement (order and pet, one commit): ${Math.round(order.rate)}/s, ${order.cpuUs.toFixed(1)} µs CPU each`);
    console.log(`ratio ${(order.rate / creation.rate).toFixed(2)}× (medians of ${rounds} alternating rounds of ${CONCURRENT * BATCHES})`);
  } finally {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[1] === import.meta.filename) {
  const argv = process.argv.slice(2);
  const inProcess = argv.includes('--in-process');
  const option = (name: string, otherwise: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : otherwise);
  const rounds = Number(argv.find((argument, index) => !argument.startsWith('--') && !argv[index - 1]?.startsWith('--p') && !argv[index - 1]?.startsWith('--s')) ?? (inProcess ? 5 : 3));
  if (inProcess) await runInProcess(rounds);
  else await runPlacementBench({ pets: option('--pets', 100_000), rounds, seconds: option('--seconds', 3), warmupSeconds: 1, connections: 64, log: (line) => console.log(line) });
}
