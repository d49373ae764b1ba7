import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measure } from 'mitata';
import { addPet, listPets } from '../application/index.ts';
import type { Pet, PetStatus } from '../domain/index.ts';
import { createListingCache } from '../adapters/http/listing-cache/listing-cache.ts';
import { openSqlite } from '../adapters/store/sqlite/open-sqlite.ts';
import { rebuildReadModels } from '../adapters/store/read-models/read-model-maintenance.ts';
import { openSqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';
import { sqliteSqlDialect } from '../adapters/store/sqlite/sqlite-sql-dialect.ts';
import type { SqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';
import { seededCopy, seededFile } from './seed.ts';

export interface InProcessOptions {
  /** The two catalogue sizes `listPets` is compared at. */
  readonly smallPets: number;
  readonly largePets: number;
  /** The seed the projection rebuild replays. */
  readonly rebuildPets: number;
  /** mitata's minimum CPU time per measurement, in milliseconds. */
  readonly minCpuMs: number;
  /** The filters and limits `listPets` is measured with (every pair). */
  readonly statuses: readonly (PetStatus | 'any')[];
  readonly limits: readonly number[];
  /** Group sizes for the append figures, and how many groups each. */
  readonly groupSizes: readonly number[];
  readonly groupsEach: number;
  readonly log: (line: string) => void;
}

export interface ListPetsFigure {
  readonly status: PetStatus | 'any';
  readonly limit: number;
  /** Mean time per call, in nanoseconds. */
  readonly smallNs: number;
  readonly largeNs: number;
  readonly ratio: number;
}

export interface InProcessFigures {
  readonly listPets: { readonly smallPets: number; readonly largePets: number; readonly cases: readonly ListPetsFigure[]; readonly worstRatio: number };
  /** A cached listing answer: the freshness check (one prepared statement) and the lookup. */
  readonly cachedAnswerNs: number;
  readonly serialisation: readonly { readonly pets: number; readonly stringifyNs: number; readonly toBufferNs: number }[];
  readonly rebuild: { readonly pets: number; readonly events: number; readonly seconds: number; readonly eventsPerSecond: number };
  /**
   * Durable (synchronous=FULL) on this machine's disk, `groupSize` at a time: appends of a new pet's
   * event straight to the event store, and creations through `addPet` (each an id and an append); one commit a group.
   */
  readonly appends: readonly { readonly groupSize: number; readonly appendsPerSecond: number; readonly creationsPerSecond: number }[];
}

async function meanNs(work: () => unknown, minCpuMs: number): Promise<number> {
  const stats = await measure(work, { min_cpu_time: minCpuMs * 1e6 });
  return stats.avg;
}

/** The in-process figures: use cases over the SQLite read model, serialisation, rebuild, appends. */
export async function runInProcess(options: InProcessOptions): Promise<InProcessFigures> {
  const listing = await measureListPets(options);
  const cachedAnswerNs = await measureCachedAnswer(options);
  const serialisation = await measureSerialisation(options);
  const rebuild = await measureRebuild(options);
  const appends = await measureAppends(options);
  return { listPets: listing, cachedAnswerNs, serialisation, rebuild, appends };
}

async function openSeed(pets: number): Promise<SqlitePetStore> {
  return openSqlitePetStore(await seededFile(pets));
}

async function measureListPets(options: InProcessOptions): Promise<InProcessFigures['listPets']> {
  const small = await openSeed(options.smallPets);
  const large = await openSeed(options.largePets);
  const cases: ListPetsFigure[] = [];
  try {
    for (const status of options.statuses) {
      for (const limit of options.limits) {
        const input = status === 'any' ? { limit } : { status, limit };
        const smallNs = await meanNs(() => listPets(small, input), options.minCpuMs);
        const largeNs = await meanNs(() => listPets(large, input), options.minCpuMs);
        const figure = { status, limit, smallNs, largeNs, ratio: largeNs / smallNs };
        cases.push(figure);
        options.log(`listPets status=${status} limit=${limit}: ${format(smallNs)} at ${options.smallPets}, ${format(largeNs)} at ${options.largePets} (×${figure.ratio.toFixed(2)})`);
      }
    }
  } finally {
    await small.close();
    await large.close();
  }
  return { smallPets: options.smallPets, largePets: options.largePets, cases, worstRatio: Math.max(...cases.map((figure) => figure.ratio)) };
}

async function measureCachedAnswer(options: InProcessOptions): Promise<number> {
  const store = await openSeed(options.smallPets);
  try {
    const cache = createListingCache(store.commits);
    cache.set('limit=20', cache.mark(), { body: Buffer.from('[]'), link: undefined }, { status: undefined, after: 0, through: 21 });
    const ns = await meanNs(() => cache.get('limit=20'), options.minCpuMs);
    options.log(`cached listing answer (freshness check + lookup): ${format(ns)}`);
    return ns;
  } finally {
    await store.close();
  }
}

async function measureSerialisation(options: InProcessOptions): Promise<InProcessFigures['serialisation']> {
  const store = await openSeed(options.smallPets);
  try {
    const figures = [];
    for (const pets of [20, 100]) {
      const page: Pet[] = await listPets(store, { limit: pets });
      const stringifyNs = await meanNs(() => JSON.stringify(page), options.minCpuMs);
      const text = JSON.stringify(page);
      const toBufferNs = await meanNs(() => Buffer.from(text), options.minCpuMs);
      options.log(`serialise ${pets} pets: JSON.stringify ${format(stringifyNs)}, to a Buffer ${format(toBufferNs)}`);
      figures.push({ pets, stringifyNs, toBufferNs });
    }
    return figures;
  } finally {
    await store.close();
  }
}

async function measureRebuild(options: InProcessOptions): Promise<InProcessFigures['rebuild']> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-rebuild-'));
  try {
    const { db } = await openSqlite(await seededCopy(options.rebuildPets, join(directory, 'rebuild.db')));
    try {
      const started = performance.now();
      const result = await rebuildReadModels({ db, dialect: sqliteSqlDialect });
      const seconds = (performance.now() - started) / 1000;
      const figure = { pets: result.rows, events: result.events, seconds, eventsPerSecond: result.events / seconds };
      options.log(`projection rebuild: ${result.events} events in ${seconds.toFixed(2)} s, ${Math.round(figure.eventsPerSecond)} events/s`);
      return figure;
    } finally {
      await db.destroy();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function measureAppends(options: InProcessOptions): Promise<InProcessFigures['appends']> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-appends-'));
  const store = await openSqlitePetStore(join(directory, 'appends.db'));
  // Ids far above the sequence's, for appends that bypass it.
  let nextId = 1_000_000_000;
  const append = () => {
    const id = nextId++;
    const stateAfter = { kind: 'present', pet: { id, name: 'bench', categoryId: 1, status: 'available' } };
    return store.eventStore.append([{ streamId: `pet-${id}`, expected: 'no_stream', events: [{ type: 'PetAdded', data: { id, name: 'bench', categoryId: 1, status: 'available' } }], stateAfter }], { recordedAt: new Date().toISOString() });
  };
  const create = (index: number) => addPet(store, { name: `bench ${index}`, categoryId: 1, status: 'available' });
  /** Groups of `size` concurrent calls, one group after another: calls a second. */
  const rate = async (size: number, call: (index: number) => Promise<unknown>) => {
    const group = () => Promise.all(Array.from({ length: size }, (_, index) => call(index)));
    await group();
    const started = performance.now();
    for (let round = 0; round < options.groupsEach; round++) await group();
    return (size * options.groupsEach) / ((performance.now() - started) / 1000);
  };
  try {
    const figures = [];
    for (const groupSize of options.groupSizes) {
      const figure = { groupSize, appendsPerSecond: await rate(groupSize, append), creationsPerSecond: await rate(groupSize, create) };
      options.log(`groups of ${groupSize}: ${Math.round(figure.appendsPerSecond)} appends/s, ${Math.round(figure.creationsPerSecond)} creations/s`);
      figures.push(figure);
    }
    return figures;
  } finally {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

function format(ns: number): string {
  return ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
}
