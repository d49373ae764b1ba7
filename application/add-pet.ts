import { assertValidNewPet, decide, initialState, petStreamId } from '../domain/index.ts';
import type { Pet } from '../domain/index.ts';
import { CURRENT_SCHEMA_VERSION } from './event-schema.ts';
import type { PetStorePorts, RequestContext } from './ports.ts';

export interface NewPet {
  readonly name: unknown;
  readonly categoryId: unknown;
  readonly status?: unknown;
}

/** Adds a pet. Throws `PetRuleViolation` when the new pet breaks an invariant. */
export async function addPet(ports: PetStorePorts, newPet: NewPet, context: RequestContext = {}): Promise<Pet> {
  // Checked before an id is taken: a refused pet leaves the store exactly as it was, sequence included.
  assertValidNewPet(newPet);
  const id = await ports.petIds.next();
  const events = decide({ type: 'AddPet', data: { ...newPet, id } }, initialState());
  await ports.eventStore.append(petStreamId(id), 'no_stream', events, {
    schemaVersion: CURRENT_SCHEMA_VERSION.PetAdded,
    recordedAt: ports.clock.now().toISOString(),
    ...context,
  });
  return events[0]!.data;
}
