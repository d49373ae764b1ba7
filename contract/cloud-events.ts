import type { PetEvent } from '../domain/index.ts';
import type { StoredEvent } from '../application/index.ts';
import { CLOUD_EVENT_TYPES } from './event-feed.ts';

/** The text between an event's `source` and its pet id, one per event type: `type` and the start of `subject`. */
const TYPE_AND_SUBJECT = Object.fromEntries(
  Object.entries(CLOUD_EVENT_TYPES).map(([type, name]) => [type, `,"type":${JSON.stringify(name)},"subject":"pets/`]),
) as Record<PetEvent['type'], string>;

let lastSource = '';
let lastSourceJson = '""';

/** `source` as JSON: the same for every event a deployment sends, so quoted once. */
function sourceJson(source: string): string {
  if (source !== lastSource) {
    lastSourceJson = JSON.stringify(source);
    lastSource = source;
  }
  return lastSourceJson;
}

/**
 * One stored event as CloudEvents 1.0 structured JSON text: the same text in the JSON feed, a pet's
 * history and each SSE message. Only the event itself leaves: none of who caused it (key id, request
 * id, trace id) is in it. Built from a template a type rather than one object stringified: a stream
 * catching up sends hundreds of thousands, and the text is `JSON.stringify` of the object, key for key.
 */
export function cloudEventJson(stored: StoredEvent, source: string): string {
  const { type, data } = stored.event;
  return `{"specversion":"1.0","id":"${stored.position}","source":${sourceJson(source)}${TYPE_AND_SUBJECT[type]}${data.id}","time":${
    JSON.stringify(stored.metadata.recordedAt)},"datacontenttype":"application/json","data":${JSON.stringify(data)}}`;
}

/** Events as one JSON array, built from their texts. */
export function cloudEventsJson(events: readonly StoredEvent[], source: string): string {
  return `[${events.map((stored) => cloudEventJson(stored, source)).join(',')}]`;
}
