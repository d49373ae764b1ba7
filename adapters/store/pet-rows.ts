import type { Pet, PetStatus } from '../../domain/index.ts';
import type { PetsTable } from './schema.ts';

/** A pet's row of the read model `pets`. */
export type PetRow = PetsTable;

/** `pet` at `version` as its row of `pets`: a new row (created at `at`), or `row` changed in place. */
export function rowForPet(row: PetRow | undefined, pet: Pet, version: number, at: string): PetRow {
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
