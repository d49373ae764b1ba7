import { decide, evolve, initialState, petStreamId } from '../domain/index.ts';
import type { PetState } from '../domain/index.ts';
import { PetNotFound, StreamVersionConflict, TooMuchContention, VersionMismatch } from './errors.ts';
import type { PetStorePorts, RequestContext, VersionedPet } from './ports.ts';

export interface ChangePetStatusInput {
  readonly id: number;
  readonly status: unknown;
  /**
   * The versions the caller last saw (from If-Match), or '*' for any. When given, the change applies
   * only if the pet is still at one of them; a concurrent write makes it fail with `VersionMismatch`.
   */
  readonly ifVersion?: readonly number[] | '*';
}

/** Attempts when no version is named and concurrent writers keep moving the pet. */
export const STATUS_CHANGE_ATTEMPTS = 5;

/**
 * Changes a pet's status by the status rules. Changing to the current status records nothing.
 * Throws `PetNotFound`, `PetRuleViolation` (unknown status), `IllegalStatusTransition`, `VersionMismatch`.
 */
export async function changePetStatus(ports: PetStorePorts, input: ChangePetStatusInput, context: RequestContext = {}): Promise<VersionedPet> {
  const streamId = petStreamId(input.id);
  for (let attempt = 1; ; attempt++) {
    const { state, version } = await loadPet(ports, streamId);
    if (state.kind === 'absent') throw new PetNotFound(input.id);
    if (input.ifVersion !== undefined && input.ifVersion !== '*' && !input.ifVersion.includes(version)) {
      throw new VersionMismatch(input.ifVersion, version);
    }
    const events = decide({ type: 'ChangePetStatus', data: { id: input.id, status: input.status } }, state);
    if (events.length === 0) return { pet: state.pet, version };
    try {
      const appended = await ports.eventStore.append(streamId, version, events, { recordedAt: ports.clock.now().toISOString(), ...context });
      const after = events.reduce(evolve, state);
      if (after.kind !== 'present') throw new Error('a status change removed the pet');
      return { pet: after.pet, version: appended.version };
    } catch (error) {
      if (!(error instanceof StreamVersionConflict)) throw error;
      if (input.ifVersion !== undefined) throw new VersionMismatch(input.ifVersion, error.actual);
      if (attempt >= STATUS_CHANGE_ATTEMPTS) throw new TooMuchContention(streamId, attempt);
    }
  }
}

/** The pet's current state, folded from its stream. */
export async function loadPet(ports: Pick<PetStorePorts, 'eventStore'>, streamId: string): Promise<{ state: PetState; version: number }> {
  const stream = await ports.eventStore.readStream(streamId);
  return { state: stream.events.reduce((state, stored) => evolve(state, stored.event), initialState()), version: stream.version };
}
