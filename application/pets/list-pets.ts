import { assertValidStatus } from '../../domain/index.ts';
import type { Pet, PetStatus } from '../../domain/index.ts';
import { InvalidPetQuery } from '../errors.ts';
import type { PetQuery, PetStorePorts } from '../ports.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** A listing as asked for; checked here, once (the callers only turn their text into these types). */
export interface ListPetsInput {
  readonly status?: PetStatus | string;
  readonly limit?: number;
  /** Continue after this pet id (exclusive). */
  readonly after?: number;
}

/**
 * The part of the catalogue a page was read from: the pets of `status` (any when undefined) with ids in
 * `(after, through]`. A change outside it cannot change the page.
 */
export interface PageScope {
  readonly status: PetStatus | undefined;
  readonly after: number;
  /** The first pet of the next page (looked ahead at to know one exists); Infinity on the last page. */
  readonly through: number;
}

export interface PetPage {
  readonly pets: Pet[];
  /** The `after` that continues the listing, or undefined when this page is the last. */
  readonly nextAfter: number | undefined;
  /** The limit the page was read with (the default when none was asked for). */
  readonly limit: number;
  readonly scope: PageScope;
}

/** Pets in ascending id order, at most `limit` of them, optionally only those with `status`. */
export async function listPets(ports: Pick<PetStorePorts, 'catalog'>, input: ListPetsInput = {}): Promise<Pet[]> {
  return ports.catalog.list(checkedQuery(input));
}

/** Like `listPets`, and also says where the next page starts (looking one pet ahead). */
export async function listPetPage(ports: Pick<PetStorePorts, 'catalog'>, input: ListPetsInput = {}): Promise<PetPage> {
  const query = checkedQuery(input);
  const pets = await ports.catalog.list({ ...query, limit: query.limit + 1 });
  const scope = { status: query.status, after: query.after ?? 0 };
  if (pets.length <= query.limit) return { pets, nextAfter: undefined, limit: query.limit, scope: { ...scope, through: Infinity } };
  const through = pets[query.limit]!.id;
  pets.length = query.limit;
  return { pets, nextAfter: pets.at(-1)!.id, limit: query.limit, scope: { ...scope, through } };
}

/** A page of a listing as asked for: how many, and after which id. */
export interface PageInput {
  readonly limit?: number;
  readonly after?: number;
}

/** Every listing's page rule, checked once: `limit` 1 to `MAX_LIMIT` (`DEFAULT_LIMIT` when absent), `after` an id of `what` or 0. */
export function checkedPage(input: PageInput, what: string): { limit: number; after?: number } {
  const limit = input.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidPetQuery('limit', `limit must be an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(input.limit)}`);
  }
  if (input.after !== undefined && (!Number.isSafeInteger(input.after) || input.after < 0)) {
    throw new InvalidPetQuery('after', `after must be a ${what} id: an integer from 0 to 2^53-1, got ${JSON.stringify(input.after)}`);
  }
  return input.after === undefined ? { limit } : { limit, after: input.after };
}

function checkedQuery(input: ListPetsInput): PetQuery {
  const { limit } = checkedPage(input, 'pet');
  const status = input.status;
  if (status !== undefined) {
    try {
      assertValidStatus(status);
    } catch (error) {
      throw new InvalidPetQuery('status', `${(error as Error).message}, got ${JSON.stringify(status)}`);
    }
  }
  return {
    limit,
    ...(status === undefined ? {} : { status }),
    ...(input.after === undefined ? {} : { after: input.after }),
  };
}
