import type { DomainEvent } from './aggregate.ts';
import { eventTypeOf } from './aggregate-registry.ts';
import type { AppendMetadata, EventMetadata } from './ports.ts';

export class UnknownEventShape extends Error {
  constructor(type: string, schemaVersion: number) {
    super(`no reader for ${type} schema version ${schemaVersion}`);
    this.name = 'UnknownEventShape';
  }
}

/** The shape version an event type is written in today (`EventShape.schemaVersion`). */
export function currentSchemaVersion(type: string): number {
  const known = eventTypeOf(type);
  if (!known) throw new UnknownEventShape(type, 0);
  return known.shape.schemaVersion;
}

/** The metadata to store with an event: the append's, with the event type's current schema version. */
export function metadataFor(event: DomainEvent, metadata: AppendMetadata): EventMetadata {
  return { schemaVersion: currentSchemaVersion(event.type), ...metadata };
}

/** Turns a stored event of any known schema version into today's shape. */
export function upcast(type: string, schemaVersion: number, data: Record<string, unknown>): DomainEvent {
  const shape = eventTypeOf(type)?.shape;
  if (shape === undefined || schemaVersion > shape.schemaVersion || schemaVersion < 1) throw new UnknownEventShape(type, schemaVersion);
  let lifted = data;
  for (let version = schemaVersion; version < shape.schemaVersion; version++) {
    const step = shape.upcasters?.[version];
    if (!step) throw new UnknownEventShape(type, version);
    lifted = step(lifted);
  }
  return { type, data: lifted };
}
