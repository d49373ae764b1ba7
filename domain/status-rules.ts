import type { PetStatus } from './pet-status.ts';

/**
 * Which status a pet may move to, from each status it can have (`none`: created without one).
 * Changing to the status a pet already has is not a move: it is accepted and records nothing.
 */
export const STATUS_TRANSITIONS: Readonly<Record<PetStatus | 'none', readonly PetStatus[]>> = {
  none: ['available', 'pending', 'sold'],
  available: ['pending', 'sold'],
  pending: ['available', 'sold'],
  sold: [],
};

export function isAllowedTransition(from: PetStatus | undefined, to: PetStatus): boolean {
  return STATUS_TRANSITIONS[from ?? 'none'].includes(to);
}
