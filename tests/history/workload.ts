import { streamSession } from './event-stream-session.ts';
import type { HistoryFile } from './history-file.ts';
import { createPet, feedPage, listPets, readPet, setStatus } from './petstore-requests.ts';
import type { Outcome, Target } from './petstore-requests.ts';
import { orderClient } from './order-clients.ts';

const STATUSES = ['available', 'pending', 'sold'] as const;
/** Attempts of a creation under one Idempotency-Key while its outcome stays unknown. */
const KEYED_ATTEMPTS = 3;

export interface WorkloadOptions {
  readonly history: HistoryFile;
  /** Where clients send pet operations, one instance at random a request. */
  readonly targets: readonly Target[];
  /** Where each consumer reads the feed: JSON pages, and event streams. */
  readonly pageTargets: readonly Target[];
  readonly streamTargets: readonly Target[];
  readonly clients: number;
  readonly pageConsumers: number;
  readonly streamConsumers: number;
  readonly random: () => number;
  readonly stopped: () => boolean;
}

/** What clients know of the pets: every acknowledged id, and the latest version one of them saw. */
interface Knowledge {
  readonly ids: number[];
  readonly versions: Map<number, number>;
}

/**
 * Concurrent clients, each one process of the history with one operation at a time: they create
 * pets (some under an Idempotency-Key, retried under it while the outcome is unknown), change
 * statuses (some with If-Match), read pets and list them, with and without Petstore-Min-Position (the
 * highest position the client has seen); consumers follow the feed as JSON pages and as event streams,
 * each resuming after the last event it received. Resolves once every loop has seen `stopped()`.
 */
export async function runWorkload(options: WorkloadOptions): Promise<void> {
  const knowledge: Knowledge = { ids: [], versions: new Map() };
  const loops: Promise<void>[] = [];
  for (let client = 0; client < options.clients; client++) loops.push(petClient(options, knowledge, `client-${client}`));
  // A store client for every four pet clients, ordering the pets they create.
  for (let client = 0; client < Math.max(1, Math.floor(options.clients / 4)); client++) {
    loops.push(orderClient({ ...options, petIds: knowledge.ids, record }, `orders-${client}`));
  }
  for (let consumer = 0; consumer < options.pageConsumers; consumer++) loops.push(pageConsumer(options, `pages-${consumer}`));
  for (let consumer = 0; consumer < options.streamConsumers; consumer++) loops.push(streamConsumer(options, `stream-${consumer}`));
  await Promise.all(loops);
}

export const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records one operation: its invoke, the request, its completion. */
export async function record(history: HistoryFile, process: string, f: string, invoke: Record<string, unknown>, run: () => Promise<Outcome>): Promise<Outcome> {
  const invocation = history.invoke(process, f, invoke);
  const outcome = await run();
  invocation.complete(outcome.type, outcome.value);
  return outcome;
}

/** After an unknown outcome (an instance down, a 503), a client waits a moment as a real one would, rather than spin. */
const backOff = (outcome: Outcome, random: () => number) => (outcome.type === 'info' ? pause(50 + random() * 100) : undefined);

async function petClient(options: WorkloadOptions, knowledge: Knowledge, process: string): Promise<void> {
  const { history, random } = options;
  let highest = 0;
  let created = 0;
  const seen = (position: unknown) => {
    if (typeof position === 'number' && position > highest) highest = position;
  };
  const minPosition = () => (highest > 0 && random() < 0.6 ? { minPosition: highest } : {});
  while (!options.stopped()) {
    const target = () => pick(random, options.targets);
    const choice = random();
    if (choice < 0.35 || knowledge.ids.length < 5) {
      const name = `${process}-${created++}`;
      const status = pick(random, [undefined, 'available', 'available', 'pending', 'sold']);
      const pet = { name, categoryId: 1 + Math.floor(random() * 5), ...(status ? { status } : {}), ...(random() < 0.3 ? { key: `key-${name}` } : {}) };
      for (let attempt = 1; attempt <= (pet.key ? KEYED_ATTEMPTS : 1); attempt++) {
        const outcome = await record(history, process, 'create', pet, () => createPet(target(), pet));
        if (outcome.type === 'ok') {
          knowledge.ids.push(outcome.value.id as number);
          knowledge.versions.set(outcome.value.id as number, 1);
          seen(outcome.value.position);
        }
        await backOff(outcome, random);
        if (outcome.type !== 'info' || options.stopped()) break;
      }
    } else if (choice < 0.65) {
      const id = pick(random, knowledge.ids);
      const known = knowledge.versions.get(id);
      const change = { id, status: pick(random, STATUSES), ...(known !== undefined && random() < 0.5 ? { ifMatch: known } : {}) };
      const outcome = await record(history, process, 'set-status', change, () => setStatus(target(), change));
      if (outcome.type === 'ok') {
        knowledge.versions.set(id, outcome.value.version as number);
        seen(outcome.value.position);
      }
      await backOff(outcome, random);
    } else if (choice < 0.85) {
      const read = { id: pick(random, knowledge.ids), ...minPosition() };
      const outcome = await record(history, process, 'read', read, () => readPet(target(), read));
      if (outcome.type === 'ok' && typeof outcome.value.version === 'number') knowledge.versions.set(read.id, outcome.value.version);
      await backOff(outcome, random);
    } else {
      const status = pick(random, [undefined, ...STATUSES]);
      const list = { limit: 1 + Math.floor(random() * 20), ...(status ? { status } : {}), ...(random() < 0.5 ? { after: pick(random, knowledge.ids) } : {}), ...minPosition() };
      await backOff(await record(history, process, 'list', list, () => listPets(target(), list)), random);
    }
  }
}

const lastPosition = (outcome: Outcome, after: number): number => {
  const events = (outcome.value.events ?? []) as { id?: unknown }[];
  const id = events.at(-1)?.id;
  return typeof id === 'string' && /^\d+$/.test(id) ? Math.max(after, Number(id)) : after;
};

async function pageConsumer(options: WorkloadOptions, process: string): Promise<void> {
  let after = 0;
  while (!options.stopped()) {
    const target = pick(options.random, options.pageTargets);
    const outcome = await record(options.history, process, 'feed', { after }, () => feedPage(target, after, 10 + Math.floor(options.random() * 91)));
    const next = lastPosition(outcome, after);
    // At the end of the log (or refused), come back a little later rather than spin.
    if (next === after) await pause(20 + options.random() * 30);
    after = next;
  }
}

async function streamConsumer(options: WorkloadOptions, process: string): Promise<void> {
  let after = 0;
  while (!options.stopped()) {
    const target = pick(options.random, options.streamTargets);
    const holdMs = 150 + options.random() * 850;
    const outcome = await record(options.history, process, 'feed', { after }, () => streamSession(target, after, holdMs));
    if (outcome.type !== 'ok') await pause(50 + options.random() * 100);
    after = lastPosition(outcome, after);
  }
}

/** The final read of the whole log, page by page, each page tried again while the service cannot answer. */
export async function readWholeLog(history: HistoryFile, target: Target, attempts = 20): Promise<Outcome> {
  return record(history, 'log', 'log', {}, async () => {
    const events: unknown[] = [];
    let after = 0;
    for (let failures = 0; failures < attempts;) {
      const page = await feedPage(target, after, 1000);
      if (page.type !== 'ok') {
        failures++;
        await pause(250);
        continue;
      }
      const received = page.value.events as unknown[];
      if (received.length === 0) return { type: 'ok', value: { events } };
      events.push(...received);
      after = lastPosition(page, after);
    }
    return { type: 'info', value: { error: `the log could not be read in ${attempts} attempts` } };
  });
}
