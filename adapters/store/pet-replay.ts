import type { Kysely } from 'kysely';
import { projectPet, upcast } from '../../application/index.ts';
import type { PetEvent } from '../../domain/index.ts';
import type { LogPage, SqlDialect } from './sql-dialect.ts';
import type { PetsTable, PetStoreDatabase, PetRow } from './schema.ts';
import { petFromRow, rowForPet } from './schema.ts';
import { inPositionOrder } from './event-rows.ts';
import type { PageEvent } from './event-rows.ts';

/** A pet's row of `pets` as the replay has it so far, changed in place as its events come: one flat object a pet. */
export type ReplayedPet = PetsTable;

/** Ids below this are kept in an array: sequences hand out small dense ids, and a Map of a million is several times slower. */
const ARRAY_IDS = 2 ** 24;

/** The replayed pets by id: an array for small ids, a Map for any other. */
export class ReplayedPets {
  readonly #small: (ReplayedPet | undefined)[] = [];
  readonly #other = new Map<number, ReplayedPet>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(id: number): ReplayedPet | undefined {
    return isSmall(id) ? this.#small[id] : this.#other.get(id);
  }

  set(pet: ReplayedPet): void {
    if (this.get(pet.id) === undefined) this.#size++;
    if (isSmall(pet.id)) this.#small[pet.id] = pet;
    else this.#other.set(pet.id, pet);
  }

  /** Every pet, small ids in id order first (the order the rows are best written in). */
  list(): ReplayedPet[] {
    const pets: ReplayedPet[] = [];
    for (let id = 0; id < this.#small.length; id++) {
      const pet = this.#small[id];
      if (pet !== undefined) pets.push(pet);
    }
    for (const pet of this.#other.values()) pets.push(pet);
    return pets;
  }
}

function isSmall(id: number): boolean {
  return Number.isInteger(id) && id >= 0 && id < ARRAY_IDS;
}

/**
 * The projection on a row, for the rebuild: folds one event into the pet's row, changing it in place (a
 * new pet gets a new row). The append writes the pet its caller folded, through the same `rowForPet`.
 */
function foldIntoRow(row: PetRow | undefined, event: PetEvent, version: number, at: string): PetRow {
  const { pet } = projectPet(row && { pet: petFromRow(row), version: row.version }, [event], version);
  return rowForPet(row, pet, version, at);
}

/** Events a page: about a megabyte of JSON, whose objects die young (larger pages cost more in garbage collection). */
const PAGE = 5_000;

/** Folds events into the pets with the inline projection's own row fold, one event at a time. */
function fold(into: ReplayedPets, events: readonly PageEvent[]): void {
  for (const [, streamVersion, type, data, { schemaVersion, recordedAt }] of events) {
    const event = upcast(type, schemaVersion, data);
    const current = into.get(event.data.id);
    const row = foldIntoRow(current, event, streamVersion, recordedAt);
    if (current === undefined) into.set(row);
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
  pages: AsyncIterable<LogPage>, into: ReplayedPets, afterPosition: number, onPage?: (events: number) => void,
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
