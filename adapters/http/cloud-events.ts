import type { StoredEvent } from '../../application/index.ts';
import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';

/**
 * One stored event as CloudEvents 1.0 structured JSON text: the same text in the JSON feed, a pet's
 * history and each SSE message. Only the event itself leaves: none of who caused it (key id, request
 * id, trace id) is in it.
 */
export function cloudEventJson(stored: StoredEvent, source: string): string {
  return JSON.stringify({
    specversion: '1.0',
    id: String(stored.position),
    source,
    type: CLOUD_EVENT_TYPES[stored.event.type],
    subject: `pets/${stored.event.data.id}`,
    time: stored.metadata.recordedAt,
    datacontenttype: 'application/json',
    data: stored.event.data,
  });
}

/** Events as one JSON array, built from their texts. */
export function cloudEventsJson(events: readonly StoredEvent[], source: string): string {
  return `[${events.map((stored) => cloudEventJson(stored, source)).join(',')}]`;
}
