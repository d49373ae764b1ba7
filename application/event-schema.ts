import type { DomainEvent } from './aggregate.ts';
import { eventTypeOf } from './aggregate-registry.ts';

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

/**
 * The metadata to store with an event, as JSON text: `{"schemaVersion": …}` (the event type's current
 * one) followed by the append's metadata, given as its own JSON text (`metadataText`), which an append
 * of several events thus encodes once.
 */
export function eventMetadataText(event: DomainEvent, metadataText: string): string {
  const schemaVersion = `{"schemaVersion":${currentSchemaVersion(event.type)}`;
  return metadataText === '{}' ? `${schemaVersion}}` : `${schemaVersion},${metadataText.slice(1)}`;
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
