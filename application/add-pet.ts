import { assertValidNewPet, decide, evolve, initialState, petStreamId } from '../domain/index.ts';
import type { Pet } from '../domain/index.ts';
import { canonicalJson } from './canonical-json.ts';
import { IdempotencyKeyReused, IdempotencyKeyTaken } from './errors.ts';
import type { IdempotencyRecord, PetStorePorts, RequestContext } from './ports.ts';

export interface NewPet {
  readonly name: unknown;
  readonly categoryId: unknown;
  readonly status?: unknown;
}

export interface AddPetOptions {
  /** With a key, the same request again returns the first answer and creates nothing. */
  readonly idempotencyKey?: string;
}

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Adds a pet. Throws `PetRuleViolation` when it breaks an invariant, `IdempotencyKeyReused` when the
 * key was first used with a different request.
 */
export async function addPet(
  ports: PetStorePorts,
  newPet: NewPet,
  context: RequestContext = {},
  options: AddPetOptions = {},
): Promise<Pet> {
  const { idempotencyKey } = options;
  const scope = context.apiKeyId ?? '';
  // Only a keyed request needs its fingerprint.
  const fingerprint = idempotencyKey === undefined ? '' : canonicalJson(newPet);
  if (idempotencyKey !== undefined) {
    const replay = await replayIfRemembered(ports, scope, idempotencyKey, fingerprint);
    if (replay) return replay;
  }
  assertValidNewPet(newPet); // before an id is taken, so refused requests leave no gaps
  const now = ports.clock.now();
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString();
  try {
    // The store assigns the id and appends in one transaction: the events are decided from it there.
    const { pet } = await ports.eventStore.appendNew((id) => {
      const events = decide({ type: 'AddPet', data: { ...newPet, id } }, initialState());
      const added = events.reduce(evolve, initialState());
      if (added.kind !== 'present') throw new Error('AddPet produced no pet');
      const stream = { streamId: petStreamId(id), events, pet: added.pet };
      if (idempotencyKey === undefined) return stream;
      const remember: IdempotencyRecord = { scope, key: idempotencyKey, fingerprint, pet: added.pet, expiresAt };
      return { ...stream, remember };
    }, { recordedAt: now.toISOString(), ...context });
    return pet;
  } catch (error) {
    // A concurrent request with the same key committed first: answer as it did.
    if (error instanceof IdempotencyKeyTaken && idempotencyKey !== undefined) {
      const replay = await replayIfRemembered(ports, scope, idempotencyKey, fingerprint);
      if (replay) return replay;
    }
    throw error;
  }
}

async function replayIfRemembered(ports: PetStorePorts, scope: string, key: string, fingerprint: string): Promise<Pet | undefined> {
  const record = await ports.idempotencyKeys.find(scope, key, ports.clock.now());
  if (!record) return undefined;
  if (record.fingerprint !== fingerprint) throw new IdempotencyKeyReused(key);
  return record.pet;
}
