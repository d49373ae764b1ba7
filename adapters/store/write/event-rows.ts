import { currentSchemaVersion, upcast } from '../../../application/index.ts';
import type { DomainEvent, EventMetadata, StoredEvent, StoredEventText } from '../../../application/index.ts';

/** An event as a log page holds it: position, stream, stream version, type, data and metadata as stored. */
export type PageEvent = [number, string, number, string, Record<string, unknown>, EventMetadata];

/** The page's events in position order: they come in it, but the dialects do not promise it. */
export function inPositionOrder(events: PageEvent[]): PageEvent[] {
  for (let index = 1; index < events.length; index++) {
    if (events[index]![0] <= events[index - 1]![0]) return events.sort((a, b) => a[0] - b[0]);
  }
  return events;
}

/**
 * A log page's text (`LogPage`) as stored events in today's shape, in position order: one parse for the page.
 * `dataAsText`: the page holds each event's data as a JSON string (`LogFilter.dataAsText`); an event in
 * today's shape keeps it as its text, parsed only when its data is asked for.
 */
export function storedEventsFromPage(text: string, dataAsText = false): StoredEvent[] {
  const events = inPositionOrder(JSON.parse(text) as PageEvent[]);
  if (!dataAsText) return events.map(([position, streamId, streamVersion, type, data, metadata]) => ({ position, streamId, streamVersion, event: upcast(type, metadata.schemaVersion, data), metadata }));
  return events.map(([position, streamId, streamVersion, type, data, metadata]) => (metadata.schemaVersion === currentSchemaVersion(type)
    ? new TextEvent(position, streamId, streamVersion, type, data as unknown as string, metadata)
    : { position, streamId, streamVersion, event: upcast(type, metadata.schemaVersion, JSON.parse(data as unknown as string)), metadata }));
}

/** An event in today's shape read with its data's stored text, which is parsed once, when its event is asked for. */
class TextEvent implements StoredEvent, StoredEventText {
  #event: DomainEvent | undefined;
  constructor(
    readonly position: number, readonly streamId: string, readonly streamVersion: number, readonly type: string, readonly dataJson: string, readonly metadata: EventMetadata,
  ) {}

  get text(): StoredEventText {
    return this;
  }

  get event(): DomainEvent {
    return (this.#event ??= upcast(this.type, this.metadata.schemaVersion, JSON.parse(this.dataJson) as Record<string, unknown>));
  }
}
