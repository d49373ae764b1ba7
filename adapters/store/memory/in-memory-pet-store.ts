import type { Pet } from '../../../domain/index.ts';
import { ORDER_AGGREGATE, PET_AGGREGATE, petFromRow } from '../../../application/index.ts';
import type {
  AppendResult, Clock, Commits, EventLog, EventStore, IdempotencyKeys, IdempotencyRecord, Inventory, OrderBook, PetCatalog, PetQuery, PetRowValues, PetStorePorts,
  StoredEvent, StreamRead, VersionedPet,
} from '../../../application/index.ts';
import { executeAppend, streamAtVersion } from '../write/append-plan.ts';
import type { AppendRequest, AppendRows, NewEventRow } from '../write/append-plan.ts';
import { storedEventFromRow } from '../schema.ts';
import { createCommitListeners } from '../commit-listeners.ts';
import { createInMemoryEventLog } from './in-memory-event-log.ts';
import { createInMemoryInventory, createInMemoryOrderBook } from './in-memory-order-book.ts';
import { createInMemoryReadModels } from './in-memory-read-models.ts';

/** A whole pet store in memory: for headless use and tests. Same semantics as the SQL stores. */
export interface InMemoryPetStore extends PetStorePorts {
  readonly orders: OrderBook;
  readonly inventory: Inventory;
  /** Every event in log order. */
  readonly log: readonly StoredEvent[];
  readonly eventLog: EventLog;
  /** Tells each append once it is stored; nothing else writes to it. */
  readonly commits: Commits;
}

export function createInMemoryPetStore(options: { clock?: Clock } = {}): InMemoryPetStore {
  const clock = options.clock ?? { now: () => new Date() };
  const log: StoredEvent[] = [];
  const streams = new Map<string, StoredEvent[]>();
  const readModels = createInMemoryReadModels();
  const remembered = new Map<string, IdempotencyRecord>();
  /** The last id drawn, by sequence (aggregate). */
  const lastIds = new Map<string, number>();
  const rememberedKey = (scope: string, key: string) => JSON.stringify([scope, key]);
  // Appends run one after another, each answered in a later turn, as a database store answers.
  let appending: Promise<unknown> = Promise.resolve();
  const listeners = createCommitListeners();

  /** One append's transaction: reads see what is stored, writes wait in `staged` until the plan succeeds. */
  const transaction = () => {
    const staged: (() => void)[] = [];
    const appendRows: AppendRows = {
      streamVersion: (streamId) => streams.get(streamId)?.length ?? 0,
      row: (table, id) => {
        const row = readModels.table(table).get(id);
        return row && { ...row };
      },
      remember(record, now) {
        const existing = remembered.get(rememberedKey(record.scope, record.key));
        if (existing && existing.expiresAt > now) return false;
        staged.push(() => remembered.set(rememberedKey(record.scope, record.key), record));
        return true;
      },
      writeRow(table, row) {
        staged.push(() => readModels.table(table).set(row));
      },
      insertEvents(eventRows: readonly NewEventRow[]) {
        const first = log.length + 1;
        staged.push(() => {
          for (const row of eventRows) {
            const stored = storedEventFromRow({ ...row, position: log.length + 1 });
            log.push(stored);
            const stream = streams.get(row.stream_id) ?? [];
            stream.push(stored);
            streams.set(row.stream_id, stream);
          }
        });
        return first + eventRows.length - 1;
      },
    };
    return { appendRows, commit: () => staged.forEach((write) => write()) };
  };

  const eventStore: EventStore = {
    async readStream(streamId: string): Promise<StreamRead> {
      const events = streams.get(streamId) ?? [];
      return { version: events.length, events: [...events] };
    },
    append(appended, metadata, appendOptions) {
      return appendInTurn(() => ({ streams: appended, metadata, options: appendOptions }));
    },
    async create(sequence, build, reads = []) {
      let id = 0;
      const result = await appendInTurn((rows) => {
        id = (lastIds.get(sequence) ?? 0) + 1;
        const built = build(id, reads.map((streamId) => streamAtVersion(rows, streamId)));
        if (built.streams[0]?.expected !== 'no_stream') throw new Error('a creation\'s first stream must be a new one');
        // Taken once built, whatever becomes of the append, as the SQL stores' sequences are.
        lastIds.set(sequence, id);
        return { streams: built.streams, metadata: built.metadata, options: built.options };
      });
      return { ...result, id };
    },
  };

  /** Runs the append `request` makes once the appends before it are done: one transaction at a time. */
  function appendInTurn(request: (rows: AppendRows) => AppendRequest): Promise<AppendResult> {
    const appended = appending.then(async () => {
      const { appendRows, commit } = transaction();
      const { version, versions, position, changes, types } = executeAppend(appendRows, request(appendRows), clock.now());
      commit();
      listeners.tell({ last: position, changes, types });
      return { version, versions, position };
    });
    appending = appended.catch(() => undefined);
    return appended;
  }

  const pets = readModels.table(PET_TABLE);
  const catalog: PetCatalog = {
    async list({ status, limit, after = 0 }: PetQuery): Promise<Pet[]> {
      const page: Pet[] = [];
      for (const row of pets.from(after)) {
        if (status !== undefined && row.status !== status) continue;
        page.push(petFromRow(row as unknown as PetRowValues));
        if (page.length === limit) break;
      }
      return page;
    },
    async get(id: number): Promise<VersionedPet | undefined> {
      const row = pets.get(id);
      return row && { pet: petFromRow(row as unknown as PetRowValues), version: row.version as number };
    },
  };

  const idempotencyKeys: IdempotencyKeys = {
    async find(scope: string, key: string, now: Date) {
      const record = remembered.get(rememberedKey(scope, key));
      return record && record.expiresAt > now.toISOString() ? record : undefined;
    },
  };

  const orders = createInMemoryOrderBook(readModels.table(ORDER_AGGREGATE.readModel!.table));
  const inventory = createInMemoryInventory(pets);
  return { eventStore, catalog, orders, inventory, idempotencyKeys, clock, log, eventLog: createInMemoryEventLog(log), commits: { onCommitted: listeners.onCommitted, refresh() {} } };
}

const PET_TABLE = PET_AGGREGATE.readModel!.table;
