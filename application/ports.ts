import type { Pet, PetEvent, PetStatus } from '../domain/index.ts';

/** `no_stream`: the stream must not exist yet. A number: the stream must be at exactly that version. */
export type ExpectedVersion = 'no_stream' | number;

/** Who caused a write; stored with each event, never the API key itself. */
export interface RequestContext {
  readonly requestId?: string;
  readonly apiKeyId?: string;
}

export interface EventMetadata {
  readonly schemaVersion: number;
  readonly recordedAt: string;
  readonly requestId?: string;
  readonly apiKeyId?: string;
}

export interface StoredEvent {
  readonly position: number;
  readonly streamId: string;
  readonly streamVersion: number;
  readonly event: PetEvent;
  readonly metadata: EventMetadata;
}

export interface StreamRead {
  /** 0 when the stream does not exist. */
  readonly version: number;
  readonly events: readonly StoredEvent[];
}

export interface AppendResult {
  /** The stream's version after the append. */
  readonly version: number;
}

export interface EventStore {
  readStream(streamId: string): Promise<StreamRead>;
  /**
   * Appends atomically and updates the read model in the same transaction.
   * Rejects with `StreamVersionConflict` when the stream is not at `expected`.
   */
  append(streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: EventMetadata): Promise<AppendResult>;
}

export interface PetQuery {
  readonly status?: PetStatus;
  readonly limit: number;
}

/** The read model the listing and the lookup are served from. */
export interface PetCatalog {
  list(query: PetQuery): Promise<Pet[]>;
  get(id: number): Promise<Pet | undefined>;
}

export interface PetIds {
  /** A new id, never handed out before. */
  next(): Promise<number>;
}

export interface Clock {
  now(): Date;
}

/** Everything the use cases need from the outside world. */
export interface PetStorePorts {
  readonly eventStore: EventStore;
  readonly catalog: PetCatalog;
  readonly petIds: PetIds;
  readonly clock: Clock;
}
