import { assertValidStatus } from '../domain/index.ts';
import type { Pet, PetStatus } from '../domain/index.ts';
import { InvalidPetQuery } from './errors.ts';
import type { PetQuery, PetStorePorts } from './ports.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface ListPetsInput {
  readonly status?: PetStatus;
  readonly limit?: number;
  /** Continue after this pet id (exclusive). */
  readonly after?: number;
}

export interface PetPage {
  readonly pets: Pet[];
  /** The `after` that continues the listing, or undefined when this page is the last. */
  readonly nextAfter: number | undefined;
  /** The first pet of the next page (the one looked ahead at), or undefined when this page is the last. */
  readonly nextId: number | undefined;
}

/** Pets in ascending id order, at most `limit` of them, optionally only those with `status`. */
export async function listPets(ports: Pick<PetStorePorts, 'catalog'>, input: ListPetsInput = {}): Promise<Pet[]> {
  return ports.catalog.list(checkedQuery(input));
}

/** Like `listPets`, and also says where the next page starts (looking one pet ahead). */
export async function listPetPage(ports: Pick<PetStorePorts, 'catalog'>, input: ListPetsInput = {}): Promise<PetPage> {
  const query = checkedQuery(input);
  const pets = await ports.catalog.list({ ...query, limit: query.limit + 1 });
  if (pets.length <= query.limit) return { pets, nextAfter: undefined, nextId: undefined };
  const nextId = pets[query.limit]!.id;
  pets.length = query.limit;
  return { pets, nextAfter: pets.at(-1)!.id, nextId };
}

function checkedQuery(input: ListPetsInput): PetQuery {
  const limit = input.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidPetQuery('limit', `limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  if (input.after !== undefined && (!Number.isSafeInteger(input.after) || input.after < 0)) {
    throw new InvalidPetQuery('after', 'after must be a pet id: an integer from 0 to 2^53-1');
  }
  if (input.status !== undefined) {
    try {
      assertValidStatus(input.status);
    } catch (error) {
      throw new InvalidPetQuery('status', (error as Error).message);
    }
  }
  return {
    limit,
    ...(input.status === undefined ? {} : { status: input.status }),
    ...(input.after === undefined ? {} : { after: input.after }),
  };
}
