import type { PetEvent } from '../domain/index.ts';

/** The shape version of each event type as written today; readers upcast older shapes. */
export const CURRENT_SCHEMA_VERSION: Record<PetEvent['type'], number> = {
  PetAdded: 1,
};
