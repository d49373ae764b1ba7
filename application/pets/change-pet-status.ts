import { decide } from '../../domain/index.ts';
import { petStream } from './pet-aggregate.ts';
import { handleCommand } from '../command-handler.ts';
import { PetNotFound, VersionMismatch } from '../errors.ts';
import type { PetStorePorts, RequestContext, VersionedPet } from '../ports.ts';

export interface ChangePetStatusInput {
  readonly id: number;
  readonly status: unknown;
  /**
   * The versions the caller last saw (from If-Match), or '*' for any. When given, the change applies
   * only if the pet is still at one of them; a concurrent write makes it fail with `VersionMismatch`.
   */
  readonly ifVersion?: readonly number[] | '*';
}

/** A changed pet, and the log position a read must reach to see the change. */
export interface ChangedPet extends VersionedPet {
  readonly position: number;
}

/**
 * Changes a pet's status by the status rules. Changing to the current status records nothing.
 * Throws `PetNotFound`, `PetRuleViolation` (unknown status), `IllegalStatusTransition`, `VersionMismatch`,
 * `TooMuchContention` (without If-Match, when concurrent writers keep moving the pet).
 */
export async function changePetStatus(ports: PetStorePorts, input: ChangePetStatusInput, context: RequestContext = {}): Promise<ChangedPet> {
  const { ifVersion } = input;
  const named = ifVersion !== undefined && ifVersion !== '*' ? ifVersion : undefined;
  const outcome = await handleCommand(ports, [petStream(input.id)], ([{ state, version }]) => {
    if (state.kind === 'absent') throw new PetNotFound(input.id);
    if (named && !named.includes(version)) throw new VersionMismatch(named, version);
    return [decide({ type: 'ChangePetStatus', data: { id: input.id, status: input.status } }, state)];
  }, {
    context,
    ...(ifVersion === undefined ? {} : { onConflict: (conflict) => { throw new VersionMismatch(ifVersion, conflict.actual); } }),
  });
  const [after] = outcome.states;
  if (after.state.kind !== 'present') throw new PetNotFound(input.id);
  return { pet: after.state.pet, version: after.version, position: outcome.position };
}
