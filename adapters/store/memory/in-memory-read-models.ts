import type { ReadModelRow } from '../../../application/index.ts';

/** One read-model table in memory: rows by id, and the ids in ascending order for listings. */
export interface InMemoryTable {
  get(id: number): ReadModelRow | undefined;
  set(row: ReadModelRow): void;
  /** The rows with ids above `after`, in ascending id order. */
  from(after: number): Iterable<ReadModelRow>;
}

/** Every read model's rows in memory, a table created at its first row. */
export function createInMemoryReadModels(): { table(name: string): InMemoryTable } {
  const tables = new Map<string, InMemoryTable>();
  return {
    table(name) {
      let table = tables.get(name);
      if (!table) tables.set(name, (table = createInMemoryTable()));
      return table;
    },
  };
}

function createInMemoryTable(): InMemoryTable {
  const rows = new Map<number, ReadModelRow>();
  const sortedIds: number[] = [];
  return {
    get: (id) => rows.get(id),
    set(row) {
      const id = row.id as number;
      if (!rows.has(id)) insertSorted(sortedIds, id);
      rows.set(id, row);
    },
    *from(after) {
      for (let index = firstAbove(sortedIds, after); index < sortedIds.length; index++) yield rows.get(sortedIds[index]!)!;
    },
  };
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
