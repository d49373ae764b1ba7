import { PetNotFound } from '../errors.ts';
import type { PetStorePorts, VersionedPet } from '../ports.ts';

/** One pet by id, with its version; throws `PetNotFound` when there is none. */
export async function getPet(ports: Pick<PetStorePorts, 'catalog'>, id: number): Promise<VersionedPet> {
  const found = Number.isSafeInteger(id) && id > 0 ? await ports.catalog.get(id) : undefined;
  if (!found) throw new PetNotFound(id);
  return found;
}
