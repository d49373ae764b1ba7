import type { Kysely } from 'kysely';
import { aggregateOfStream, upcast } from '../../../application/index.ts';
import type { ReadModelRow } from '../../../application/index.ts';
import type { LogPage, SqlDialect } from '../sql-dialect.ts';
import type { PetStoreDatabase } from '../schema.ts';
import { inPositionOrder } from '../write/event-rows.ts';
import type { PageEvent } from '../write/event-rows.ts';

/** Ids below this are kept in an array: sequences hand out small dense ids, and a Map of a million is several times slower. */
const ARRAY_IDS = 2 ** 24;

/** One table's replayed rows by id, changed in place as their events come: an array for small ids, a Map for any other. */
export class ReplayedRows {
  readonly #small: (ReadModelRow | undefined)[] = [];
  readonly #other = new Map<number, ReadModelRow>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(id: number): ReadModelRow | undefined {
    return isSmall(id) ? this.#small[id] : this.#other.get(id);
  }

  set(row: ReadModelRow): void {
    const id = row.id as number;
    if (this.get(id) === undefined) this.#size++;
    if (isSmall(id)) this.#small[id] = row;
    else this.#other.set(id, row);
  }

  /** Every row, small ids in id order first (the order the rows are best written in). */
  list(): ReadModelRow[] {
    const rows: ReadModelRow[] = [];
    for (let id = 0; id < this.#small.length; id++) {
      const row = this.#small[id];
      if (row !== undefined) rows.push(row);
    }
    for (const row of this.#other.values()) rows.push(row);
    return rows;
  }
}

function isSmall(id: number): boolean {
  return Number.isInteger(id) && id >= 0 && id < ARRAY_IDS;
}

/** The replayed rows of every read-model table, by table. */
export class ReplayedReadModels {
  readonly #tables = new Map<string, ReplayedRows>();

  table(name: string): ReplayedRows {
    let rows = this.#tables.get(name);
    if (!rows) this.#tables.set(name, (rows = new ReplayedRows()));
    return rows;
  }

  /** The tables holding rows, by name. */
  tables(): ReadonlyMap<string, ReplayedRows> {
    return this.#tables;
  }

  get size(): number {
    let size = 0;
    for (const rows of this.#tables.values()) size += rows.size;
    return size;
  }
}

/** Events a page: about a megabyte of JSON, whose objects die young (larger pages cost more in garbage collection). */
const PAGE = 5_000;

/**
 * The projection on rows, for the rebuild: folds each event onto its stream's row with its aggregate's
 * `evolve` and read model, changing the row in place (a new stream gets a new row). Events of an
 * aggregate without a read model change no row. The append writes the state its caller folded, through
 * the same `rowOf`.
 */
function fold(into: ReplayedReadModels, events: readonly PageEvent[]): void {
  for (const [, streamId, streamVersion, type, data, { schemaVersion, recordedAt }] of events) {
    const found = aggregateOfStream(streamId);
    const event = upcast(type, schemaVersion, data);
    const model = found?.aggregate.readModel;
    if (!model) continue;
    const rows = into.table(model.table);
    const current = rows.get(found.id);
    const state = found.aggregate.evolve(current === undefined ? found.aggregate.initialState() : model.stateOf(current), event);
    const row = model.rowOf(current, state, streamVersion, recordedAt);
    if (current === undefined) rows.set(row);
  }
}

/**
 * The log's pages after `afterPosition`, read on `db`: each asked for as the one before arrives, so
 * that, on a database across the network, the next is on its way while the caller folds this one.
 */
export async function* logPages(db: Kysely<PetStoreDatabase>, dialect: SqlDialect, afterPosition: number): AsyncGenerator<LogPage> {
  let next = dialect.readLogPage(db, afterPosition, PAGE);
  try {
    for (;;) {
      const page = await next;
      if (page === null) return;
      next = dialect.readLogPage(db, page.last, PAGE);
      yield page;
    }
  } finally {
    // Not left running (or failing unheard) when the caller stops early.
    await next.catch(() => undefined);
  }
}

/** The log's pages after `afterPosition`, on a connection of their own when the dialect can: for reads outside any transaction. */
export async function logPagesAhead(db: Kysely<PetStoreDatabase>, dialect: SqlDialect, afterPosition: number): Promise<AsyncIterable<LogPage>> {
  return (await dialect.readLogAhead?.(db, afterPosition, PAGE)) ?? logPages(db, dialect, afterPosition);
}

/**
 * Replays `pages` into `into`, in position order. Returns the last position seen (`afterPosition`
 * when there was none) and how many events it replayed.
 */
export async function replay(
  pages: AsyncIterable<LogPage>, into: ReplayedReadModels, afterPosition: number, onPage?: (events: number) => void,
): Promise<{ last: number; events: number }> {
  let last = afterPosition;
  let replayed = 0;
  for await (const page of pages) {
    const events = inPositionOrder(JSON.parse(page.text) as PageEvent[]);
    fold(into, events);
    last = page.last;
    replayed += events.length;
    onPage?.(events.length);
  }
  return { last, events: replayed };
}
