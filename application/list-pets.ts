import { assertValidStatus } from '../domain/index.ts';
import type { Pet, PetStatus } from '../domain/index.ts';
import { InvalidPetQuery } from './errors.ts';
import type { PetStorePorts } from './ports.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface ListPetsInput {
  readonly status?: PetStatus;
  readonly limit?: number;
}

/** Pets in ascending id order, at most `limit` of them, optionally only those with `status`. */
export async function listPets(ports: Pick<PetStorePorts, 'catalog'>, input: ListPetsInput = {}): Promise<Pet[]> {
  const limit = input.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidPetQuery('limit', `limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  if (input.status !== undefined) {
    try {
      assertValidStatus(input.status);
    } catch (error) {
      throw new InvalidPetQuery('status', (error as Error).message);
    }
  }
  return ports.catalog.list(input.status === undefined ? { limit } : { status: input.status, limit });
}
