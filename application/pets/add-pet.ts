import { checkNewPet, decide, petStreamId } from '../../domain/index.ts';
import type { Pet, PetState } from '../../domain/index.ts';
import { PET_AGGREGATE } from './pet-aggregate.ts';
import { canonicalJson } from '../canonical-json.ts';
import { handleCreation } from '../command-handler.ts';
import { IdempotencyKeyTaken } from '../errors.ts';
import { recordExpiry, rememberedCreation } from '../remembered-creations.ts';
import type { PetStorePorts, RequestContext } from '../ports.ts';

export interface NewPet {
  readonly name: unknown;
  readonly categoryId: unknown;
  readonly status?: unknown;
}

export interface AddPetOptions {
  /** With a key, the same request again returns the first answer and creates nothing. */
  readonly idempotencyKey?: string;
}

/** An added pet, and the log position a read must reach to see it. */
export interface AddedPet {
  readonly pet: Pet;
  readonly position: number;
}

/** Adds a pet (see `addPetWithPosition`). */
export async function addPet(ports: PetStorePorts, newPet: NewPet, context: RequestContext = {}, options: AddPetOptions = {}): Promise<Pet> {
  return (await addPetWithPosition(ports, newPet, context, options)).pet;
}

/**
 * Adds a pet, and says the log position of its creation. Throws `PetRuleViolation` when it breaks an invariant, `IdempotencyKeyReused` when the
 * key was first used with a different request.
 */
export async function addPetWithPosition(
  ports: PetStorePorts,
  newPet: NewPet,
  context: RequestContext = {},
  options: AddPetOptions = {},
): Promise<AddedPet> {
  const { idempotencyKey } = options;
  const scope = context.apiKeyId ?? '';
  // Only a keyed request needs its fingerprint.
  const fingerprint = idempotencyKey === undefined ? '' : canonicalJson(newPet);
  if (idempotencyKey !== undefined) {
    const replay = await replayIfRemembered(ports, scope, idempotencyKey, fingerprint);
    if (replay) return replay;
  }
  const expiresAt = idempotencyKey === undefined ? '' : recordExpiry(ports);
  const fields = checkNewPet(newPet); // before the store draws an id, so refused requests leave no gaps
  try {
    const outcome = await handleCreation(ports, PET_AGGREGATE, (id, state) => decide({ type: 'AddPet', data: { id, ...fields } }, state), {
      context,
      ...(idempotencyKey === undefined ? {} : {
        remember: (after) => ({
          scope, key: idempotencyKey, fingerprint, answer: presentPet(after), expiresAt,
        }),
      }),
    });
    return { pet: presentPet(outcome.state), position: outcome.position };
  } catch (error) {
    // A concurrent request with the same key committed first: answer as it did.
    if (error instanceof IdempotencyKeyTaken && idempotencyKey !== undefined) {
      const replay = await replayIfRemembered(ports, scope, idempotencyKey, fingerprint);
      if (replay) return replay;
    }
    throw error;
  }
}

/** The remembered creation, with the position of the pet's first event: what a read must reach to see it. */
async function replayIfRemembered(ports: PetStorePorts, scope: string, key: string, fingerprint: string): Promise<AddedPet | undefined> {
  const remembered = await rememberedCreation<Pet>(ports, scope, key, fingerprint, (pet) => petStreamId(pet.id));
  return remembered && { pet: remembered.answer, position: remembered.position };
}

function presentPet(state: PetState): Pet {
  if (state.kind !== 'present') throw new Error('AddPet produced no pet');
  return state.pet;
}
