import type { Pet, PetEvent } from '../../../domain/index.ts';
import { IdempotencyKeyTaken, metadataFor, projectPet, StreamVersionConflict } from '../../../application/index.ts';
import type {
  AppendMetadata, AppendOptions, AppendResult, Clock, EventStore, ExpectedVersion, IdempotencyKeys, IdempotencyRecord,
  PetCatalog, PetQuery, PetRow, PetStorePorts, StoredEvent, StreamRead, VersionedPet,
} from '../../../application/index.ts';

/** A whole pet store in memory: for headless use and tests. Same semantics as the SQL stores. */
export interface InMemoryPetStore extends PetStorePorts {
  /** Every event in log order. */
  readonly log: readonly StoredEvent[];
}

export function createInMemoryPetStore(options: { clock?: Clock } = {}): InMemoryPetStore {
  const clock = options.clock ?? { now: () => new Date() };
  const log: StoredEvent[] = [];
  const streams = new Map<string, StoredEvent[]>();
  const rows = new Map<number, PetRow>();
  const sortedIds: number[] = [];
  const remembered = new Map<string, IdempotencyRecord>();
  let lastId = 0;
  const rememberedKey = (scope: string, key: string) => JSON.stringify([scope, key]);

  /** Synchronous, so that nothing can come between its check and its writes. */
  const appendNow = (streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: AppendMetadata, options: AppendOptions): AppendResult => {
    const stream = streams.get(streamId) ?? [];
    const actual = stream.length;
    if ((expected === 'no_stream' && actual !== 0) || (expected !== 'no_stream' && expected !== actual)) {
      throw new StreamVersionConflict(streamId, expected, actual);
    }
    const { remember } = options;
    if (remember) {
      const existing = remembered.get(rememberedKey(remember.scope, remember.key));
      if (existing && existing.expiresAt > clock.now().toISOString()) throw new IdempotencyKeyTaken(remember.scope, remember.key);
    }
    const stored = events.map((event, index): StoredEvent => ({
      position: log.length + index + 1, streamId, streamVersion: actual + index + 1, event, metadata: metadataFor(event, metadata),
    }));
    const petId = events[0]?.data.id;
    if (petId !== undefined) {
      const row = projectPet(rows.get(petId), events, actual + events.length);
      if (!rows.has(petId)) insertSorted(sortedIds, petId);
      rows.set(petId, row);
    }
    log.push(...stored);
    stream.push(...stored);
    streams.set(streamId, stream);
    if (remember) remembered.set(rememberedKey(remember.scope, remember.key), remember);
    return { version: stream.length };
  };

  const eventStore: EventStore = {
    async readStream(streamId: string): Promise<StreamRead> {
      const events = streams.get(streamId) ?? [];
      return { version: events.length, events: [...events] };
    },
    async append(streamId, expected, events, metadata, options = {}) {
      return appendNow(streamId, expected, events, metadata, options);
    },
    async appendNew(build, metadata) {
      const made = build(++lastId);
      appendNow(made.streamId, 'no_stream', made.events, metadata, made);
      return made;
    },
    async readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
      return log.slice(Math.max(0, afterPosition), Math.max(0, afterPosition) + limit);
    },
  };

  const catalog: PetCatalog = {
    async list({ status, limit, after = 0 }: PetQuery): Promise<Pet[]> {
      const page: Pet[] = [];
      for (let index = firstAbove(sortedIds, after); index < sortedIds.length; index++) {
        const id = sortedIds[index]!;
        const pet = rows.get(id)!.pet;
        if (status !== undefined && pet.status !== status) continue;
        page.push(pet);
        if (page.length === limit) break;
      }
      return page;
    },
    async get(id: number): Promise<VersionedPet | undefined> {
      return rows.get(id);
    },
  };

  const idempotencyKeys: IdempotencyKeys = {
    async find(scope: string, key: string, now: Date) {
      const record = remembered.get(rememberedKey(scope, key));
      return record && record.expiresAt > now.toISOString() ? record : undefined;
    },
  };

  return { eventStore, catalog, idempotencyKeys, clock, log };
}

function insertSorted(ids: number[], id: number): void {
  ids.splice(firstAbove(ids, id - 1), 0, id);
}

/** The index of the first id greater than `id` in an ascending array. */
function firstAbove(ids: readonly number[], id: number): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (ids[middle]! <= id) low = middle + 1;
    else high = middle;
  }
  return low;
}
