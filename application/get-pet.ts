import type { Pet } from '../domain/index.ts';
import { PetNotFound } from './errors.ts';
import type { PetStorePorts } from './ports.ts';

/** One pet by id; throws `PetNotFound` when there is none. */
export async function getPet(ports: Pick<PetStorePorts, 'catalog'>, id: number): Promise<Pet> {
  const pet = Number.isSafeInteger(id) && id > 0 ? await ports.catalog.get(id) : undefined;
  if (!pet) throw new PetNotFound(id);
  return pet;
}
