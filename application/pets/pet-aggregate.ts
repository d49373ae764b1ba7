import { evolve, initialState, petStreamId } from '../../domain/index.ts';
import type { Pet, PetEvent, PetState, PetStatus } from '../../domain/index.ts';
import type { Aggregate, ReadModelRow } from '../aggregate.ts';
import type { StreamRef } from '../command-handler.ts';

/** The Pet's row of the read model `pets`. */
export interface PetRowValues {
  id: number;
  name: string;
  category_id: number;
  status: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

/** The Pet a row of `pets` holds. Key order id, name, categoryId, status: the order clients see in JSON. */
export function petFromRow(row: { readonly id: number; readonly name: string; readonly category_id: number; readonly status: string | null }): Pet {
  return row.status === null
    ? { id: row.id, name: row.name, categoryId: row.category_id }
    : { id: row.id, name: row.name, categoryId: row.category_id, status: row.status as PetStatus };
}

/** `pet` at `version` as its row of `pets`: a new row (created at `at`), or `row` changed in place. */
export function rowForPet(row: PetRowValues | undefined, pet: Pet, version: number, at: string): PetRowValues {
  if (!row) return { id: pet.id, name: pet.name, category_id: pet.categoryId, status: pet.status ?? null, version, created_at: at, updated_at: at };
  row.name = pet.name;
  row.category_id = pet.categoryId;
  row.status = pet.status ?? null;
  row.version = version;
  row.updated_at = at;
  return row;
}

/** The Pet as the store knows it: `pet-<id>` streams, two event types, the `pets` read model. */
export const PET_AGGREGATE: Aggregate<PetState, PetEvent> = {
  name: 'pet',
  streamPrefix: 'pet-',
  subject: 'pets',
  initialState,
  evolve,
  events: {
    // 2: `status: null` records "no status"; version 1 left the key out.
    PetAdded: { schemaVersion: 2, upcasters: { 1: (data) => ({ ...data, status: data.status ?? null }) }, cloudEventType: 'com.petstore.pet.added.v1' },
    PetStatusChanged: { schemaVersion: 1, cloudEventType: 'com.petstore.pet.status-changed.v1' },
  },
  readModel: {
    table: 'pets',
    rowOf(existing, state, version, at) {
      if (state.kind !== 'present') throw new Error('a pet stream whose events leave no pet');
      return rowForPet(existing as unknown as PetRowValues | undefined, state.pet, version, at) as unknown as ReadModelRow;
    },
    stateOf: (row) => ({ kind: 'present', pet: petFromRow(row as unknown as PetRowValues) }),
    statusesOf(event) {
      const { data } = event as PetEvent;
      return 'from' in data ? [data.from, data.to] : [data.status];
    },
  },
};

/** The stream of pet `id`, for a decision that reads or appends to it. */
export function petStream(id: number): StreamRef<PetState, PetEvent> {
  return { aggregate: PET_AGGREGATE, streamId: petStreamId(id) };
}
