import type { Pet, PetEvent, PetStatus } from '../../domain/index.ts';
import { projectPet } from '../../application/index.ts';
import type { PetsTable } from './schema.ts';

/** A pet's row of the read model `pets`. */
export type PetRow = PetsTable;

/**
 * The inline projection on a row: folds one event into the pet's row, changing it in place (a new pet
 * gets a new row). The append and the rebuild both write rows made here, so they cannot disagree.
 */
export function foldIntoRow(row: PetRow | undefined, event: PetEvent, version: number, at: string): PetRow {
  const { pet } = projectPet(row && { pet: petFromRow(row), version: row.version }, [event], version);
  if (!row) return { id: pet.id, name: pet.name, category_id: pet.categoryId, status: pet.status ?? null, version, created_at: at, updated_at: at };
  row.name = pet.name;
  row.category_id = pet.categoryId;
  row.status = pet.status ?? null;
  row.version = version;
  row.updated_at = at;
  return row;
}

/** The columns of `pets` a Pet is read from (`petFromRow`): what listings select. */
export const PET_FIELD_COLUMNS = ['id', 'name', 'category_id', 'status'] as const satisfies readonly (keyof PetRow)[];

export function petFromRow(row: Pick<PetRow, (typeof PET_FIELD_COLUMNS)[number]>): Pet {
  // Key order id, name, categoryId, status: the order clients see in JSON.
  return row.status === null
    ? { id: row.id, name: row.name, categoryId: row.category_id }
    : { id: row.id, name: row.name, categoryId: row.category_id, status: row.status as PetStatus };
}
