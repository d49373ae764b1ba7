import { aggregateOfStream, eventMetadataText, IdempotencyKeyTaken, StreamVersionConflict } from '../../../application/index.ts';
import type { AppendMetadata, AppendOptions, AppendResult, IdempotencyRecord, ReadModelRow, RowChange, StreamAppend, StreamAtVersion } from '../../../application/index.ts';
import { newEventRow } from '../schema.ts';
import type { NewEventRow } from '../schema.ts';

export type { NewEventRow } from '../schema.ts';

/** An append as the store takes it: several streams, each at its expected version, in one commit. */
export interface AppendRequest {
  readonly streams: readonly StreamAppend[];
  readonly metadata: AppendMetadata;
  readonly options?: AppendOptions | undefined;
}

/**
 * What a backend does inside an append's transaction: read and write rows, nothing more. Every rule
 * (the expected versions, the idempotency record, event metadata, the read-model rows) is `executeAppend`'s.
 * Synchronous: a batch reads its rows before its plans run, so no plan waits while the lock is held.
 */
export interface AppendRows {
  /** The stream's version: that of its last event, 0 when it has no events. The plan reads every stream's first. */
  streamVersion(streamId: string): number;
  /** The read-model row of `table` with this id, a copy the plan may change. */
  row(table: string, id: number): ReadModelRow | undefined;
  /** Stores the record unless a live (unexpired at `now`) one holds its scope and key; false when one does. */
  remember(record: IdempotencyRecord, now: string): boolean;
  writeRow(table: string, row: ReadModelRow, isNew: boolean): void;
  /** Stores the events in order, as the transaction's last write; resolves with the last one's position. */
  insertEvents(rows: readonly NewEventRow[]): number;
}

/** What an append did: its result, the read-model rows it changed (for the listing cache) and the types of its events (for claims waiting on some). */
export interface Appended extends AppendResult {
  readonly changes: readonly RowChange[];
  readonly types: readonly string[];
}

/** The one append plan that every backend executes, inside a transaction the backend holds. */
export function executeAppend(rows: AppendRows, { streams, metadata, options }: AppendRequest, now: Date): Appended {
  const actuals: number[] = [];
  for (let index = 0; index < streams.length; index++) {
    const { streamId, expected } = streams[index]!;
    const actual = rows.streamVersion(streamId);
    if (expected === 'no_stream' ? actual !== 0 : expected !== actual) throw new StreamVersionConflict(streamId, expected, actual);
    for (let other = 0; other < index; other++) {
      if (streams[other]!.streamId === streamId) throw new Error(`stream ${streamId} named twice in one append`);
    }
    actuals.push(actual);
  }
  const remember = options?.remember;
  if (remember && !rows.remember(remember, now.toISOString())) throw new IdempotencyKeyTaken(remember.scope, remember.key);
  const changes: RowChange[] = [];
  const eventRows: NewEventRow[] = [];
  const metadataText = JSON.stringify(metadata);
  const versions: number[] = [];
  for (let index = 0; index < streams.length; index++) {
    const stream = streams[index]!;
    const actual = actuals[index]!;
    const { streamId, events } = stream;
    versions.push(actual + events.length);
    if (events.length === 0) continue;
    const change = writeReadModelRow(rows, stream, actual, actual + events.length, metadata.recordedAt);
    if (change) changes.push(change);
    for (let at = 0; at < events.length; at++) {
      const event = events[at]!;
      eventRows.push(newEventRow(streamId, actual + at + 1, event.type, JSON.stringify(event.data), eventMetadataText(event, metadataText), metadata.recordedAt));
    }
  }
  const position = rows.insertEvents(eventRows);
  return { version: versions[0] ?? 0, versions, position, changes, types: eventRows.map((row) => row.type) };
}

/** The stream's read-model row, in the append's transaction, so a reader never sees one without the other. */
function writeReadModelRow(rows: AppendRows, { streamId, stateAfter }: StreamAppend, versionBefore: number, versionAfter: number, at: string): RowChange | undefined {
  const found = aggregateOfStream(streamId);
  const model = found?.aggregate.readModel;
  if (!model) return undefined;
  // A new stream has no row yet: nothing to read.
  const existing = versionBefore === 0 ? undefined : rows.row(model.table, found.id);
  const before = existing === undefined ? undefined : existing.status ?? null;
  const row = model.rowOf(existing, stateAfter, versionAfter, at);
  rows.writeRow(model.table, row, existing === undefined);
  const after = row.status ?? null;
  return { table: model.table, id: found.id, statuses: before === undefined ? [after as string | null] : [before as string | null, after as string | null] };
}

/**
 * A stream as a creation's decision reads it, inside the append's transaction: its version, and the
 * state its read-model row holds (the aggregate's start when it has none), which the projection writes
 * at that version in the same commit as the stream's events.
 */
export function streamAtVersion(rows: Pick<AppendRows, 'row' | 'streamVersion'>, streamId: string): StreamAtVersion {
  const found = aggregateOfStream(streamId);
  const model = found?.aggregate.readModel;
  if (!model) throw new Error(`a creation can read only streams whose aggregate keeps a read model, not ${streamId}`);
  const version = rows.streamVersion(streamId);
  const row = version === 0 ? undefined : rows.row(model.table, found.id);
  return { state: row === undefined ? found.aggregate.initialState() : model.stateOf(row), version };
}
