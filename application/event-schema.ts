import type { PetEvent } from '../domain/index.ts';
import type { AppendMetadata, EventMetadata } from './ports.ts';

/** The shape version of each event type as written today. */
export const CURRENT_SCHEMA_VERSION: Readonly<Record<PetEvent['type'], number>> = {
  // 2: `status: null` records "no status"; version 1 left the key out.
  PetAdded: 2,
  PetStatusChanged: 1,
};

type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/** How to lift each older stored shape one version up. Keyed by type, then by the version it lifts from. */
const UPCASTERS: Readonly<Record<string, Readonly<Record<number, Upcaster>>>> = {
  PetAdded: {
    1: (data) => ({ ...data, status: data.status ?? null }),
  },
};

export class UnknownEventShape extends Error {
  constructor(type: string, schemaVersion: number) {
    super(`no reader for ${type} schema version ${schemaVersion}`);
    this.name = 'UnknownEventShape';
  }
}

/** The metadata to store with an event: the append's, with the event type's current schema version. */
export function metadataFor(event: PetEvent, metadata: AppendMetadata): EventMetadata {
  return { schemaVersion: CURRENT_SCHEMA_VERSION[event.type], ...metadata };
}

/** Turns a stored event of any known schema version into today's shape. */
export function upcast(type: string, schemaVersion: number, data: Record<string, unknown>): PetEvent {
  const current = CURRENT_SCHEMA_VERSION[type as PetEvent['type']];
  if (current === undefined || schemaVersion > current || schemaVersion < 1) throw new UnknownEventShape(type, schemaVersion);
  let lifted = data;
  for (let version = schemaVersion; version < current; version++) {
    const step = UPCASTERS[type]?.[version];
    if (!step) throw new UnknownEventShape(type, version);
    lifted = step(lifted);
  }
  return { type, data: lifted } as PetEvent;
}
