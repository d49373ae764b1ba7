import { upcast } from '../../application/index.ts';
import type { EventMetadata, StoredEvent } from '../../application/index.ts';
import type { EventsTable } from './schema.ts';

export type EventRow = Omit<EventsTable, 'position'> & { position: number };

/** A stored row in today's shape, whatever schema version it was written with. */
export function storedEventFromRow(row: EventRow): StoredEvent {
  const metadata = JSON.parse(row.metadata) as EventMetadata;
  return {
    position: row.position,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    event: upcast(row.type, metadata.schemaVersion, JSON.parse(row.data) as Record<string, unknown>),
    metadata,
  };
}
