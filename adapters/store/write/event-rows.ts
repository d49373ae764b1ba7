import { upcast } from '../../../application/index.ts';
import type { EventMetadata, StoredEvent } from '../../../application/index.ts';

/** An event as a log page holds it: position, stream, stream version, type, data and metadata as stored. */
export type PageEvent = [number, string, number, string, Record<string, unknown>, EventMetadata];

/** The page's events in position order: they come in it, but the dialects do not promise it. */
export function inPositionOrder(events: PageEvent[]): PageEvent[] {
  for (let index = 1; index < events.length; index++) {
    if (events[index]![0] <= events[index - 1]![0]) return events.sort((a, b) => a[0] - b[0]);
  }
  return events;
}

/** A log page's text (`LogPage`) as stored events in today's shape, in position order: one parse for the page. */
export function storedEventsFromPage(text: string): StoredEvent[] {
  return inPositionOrder(JSON.parse(text) as PageEvent[]).map(([position, streamId, streamVersion, type, data, metadata]) => (
    { position, streamId, streamVersion, event: upcast(type, metadata.schemaVersion, data), metadata }
  ));
}
