import type { Pet, PetEvent, PetStatus } from '../../domain/index.ts';
import { IdempotencyKeyTaken, metadataFor, StreamVersionConflict } from '../../application/index.ts';
import type { AppendMetadata, AppendOptions, AppendResult, ExpectedVersion, IdempotencyRecord, PetChange } from '../../application/index.ts';
import { newEventRow, rowForPet } from './schema.ts';
import type { NewEventRow, PetRow } from './schema.ts';

export type { NewEventRow } from './schema.ts';

export interface AppendRequest {
  readonly streamId: string;
  readonly expected: ExpectedVersion;
  readonly events: readonly PetEvent[];
  readonly metadata: AppendMetadata;
  readonly options: AppendOptions;
}

/**
 * What a backend does inside an append's transaction: read and write rows, nothing more. Every rule
 * (the expected version, the idempotency record, event metadata, the read-model row) is `executeAppend`'s.
 * Synchronous: a group reads its rows before its plans run, so no plan waits while the lock is held.
 */
export interface AppendRows {
  /** The stream's version: that of its last event, 0 when it has no events. */
  streamVersion(streamId: string): number;
  petRow(id: number): PetRow | undefined;
  /** Stores the record unless a live (unexpired at `now`) one holds its scope and key; false when one does. */
  remember(record: IdempotencyRecord, now: string): boolean;
  writePet(row: PetRow, isNew: boolean): void;
  /** Stores the events in order, as the transaction's last write; resolves with the last one's position. */
  insertEvents(rows: readonly NewEventRow[]): number;
}

/** What an append did: its result, and the pet whose row it changed (for the listing cache). */
export interface Appended extends AppendResult {
  readonly change: PetChange | undefined;
}

/** The one append plan that every backend executes, inside a transaction the backend holds. */
export function executeAppend(rows: AppendRows, { streamId, expected, events, metadata, options }: AppendRequest, now: Date): Appended {
  const actual = rows.streamVersion(streamId);
  if (expected === 'no_stream' ? actual !== 0 : expected !== actual) throw new StreamVersionConflict(streamId, expected, actual);
  if (options.remember && !rows.remember(options.remember, now.toISOString())) {
    throw new IdempotencyKeyTaken(options.remember.scope, options.remember.key);
  }
  const change = events.length === 0 ? undefined : writePetRow(rows, options.petAfter, actual, actual + events.length, metadata.recordedAt);
  const position = rows.insertEvents(events.map((event, index) =>
    newEventRow(streamId, actual + index + 1, event.type, JSON.stringify(event.data), JSON.stringify(metadataFor(event, metadata)), metadata.recordedAt)));
  return { version: actual + events.length, position, change };
}

/** The read model's row, in the append's transaction, so a reader never sees one without the other. */
function writePetRow(rows: AppendRows, pet: Pet, versionBefore: number, versionAfter: number, at: string): PetChange {
  // A new stream has no row yet: nothing to read.
  const existing = versionBefore === 0 ? undefined : rows.petRow(pet.id);
  const before = existing ? existing.status as PetStatus | null : undefined;
  const row = rowForPet(existing, pet, versionAfter, at);
  rows.writePet(row, existing === undefined);
  const after = row.status as PetStatus | null;
  return { id: pet.id, statuses: before === undefined ? [after] : [before, after] };
}
