import type { Pet, PetStatus } from '../domain/index.ts';
import type { DomainEvent } from './aggregate.ts';

/** `no_stream`: the stream must not exist yet. A number: the stream must be at exactly that version. */
export type ExpectedVersion = 'no_stream' | number;

/** Who caused a write; stored with each event, never the API key itself. */
export interface RequestContext {
  readonly requestId?: string;
  readonly apiKeyId?: string;
  /** The trace that caused the write, so that it can be found from the event. */
  readonly traceId?: string;
}

/** What the writer says about an append; the same for every event in it. */
export interface AppendMetadata {
  readonly recordedAt: string;
  readonly requestId?: string;
  readonly apiKeyId?: string;
  readonly traceId?: string;
}

/** Stored with each event: the append's metadata plus the shape version the event was written in. */
export interface EventMetadata extends AppendMetadata {
  readonly schemaVersion: number;
}

export interface StoredEvent {
  readonly position: number;
  readonly streamId: string;
  readonly streamVersion: number;
  readonly event: DomainEvent;
  readonly metadata: EventMetadata;
  /**
   * The event as the log stores it, when read so and in today's shape: its type and its data's JSON text
   * (what `JSON.stringify(event.data)` gives), for writers of its text that need not parse it.
   */
  readonly text?: StoredEventText | undefined;
}

/** See `StoredEvent.text`. */
export interface StoredEventText {
  readonly type: string;
  readonly dataJson: string;
}

export interface StreamRead {
  /** 0 when the stream does not exist. */
  readonly version: number;
  readonly events: readonly StoredEvent[];
}

export interface AppendResult {
  /** The first stream's version after the append. */
  readonly version: number;
  /** Each stream's version after the append, in the order the append named them. */
  readonly versions: readonly number[];
  /** The log position of the append's last event: how new a reader must be to see it. */
  readonly position: number;
}

/** A remembered creation: the same key and request from the same caller get the same answer. */
export interface IdempotencyRecord {
  /** Whose key it is: keys of different callers never collide. */
  readonly scope: string;
  readonly key: string;
  /** The request as canonical JSON: a later request with the key must match it. */
  readonly fingerprint: string;
  /** What the first request was answered (JSON), answered again to a repeat. */
  readonly answer: unknown;
  readonly expiresAt: string;
}

/** One stream of an append: the version its decision read, the events it decided, and the state they leave. */
export interface StreamAppend {
  readonly streamId: string;
  readonly expected: ExpectedVersion;
  readonly events: readonly DomainEvent[];
  /**
   * The aggregate's state as the events leave it, folded by the caller (the use case decided the events
   * from the state it read): the store writes its read-model row from it, without folding anything itself.
   */
  readonly stateAfter: unknown;
}

export interface AppendOptions {
  /** Stored in the same transaction as the events; fails with `IdempotencyKeyTaken` when already stored. */
  readonly remember?: IdempotencyRecord;
}

export interface EventStore {
  readStream(streamId: string): Promise<StreamRead>;
  /**
   * Appends to every stream of `streams` in one transaction, each at the version it expects, or to none:
   * rejects with `StreamVersionConflict` (naming the first that moved) when one is not at `expected`.
   * Writes each stream's read-model row from its `stateAfter` in the same transaction. Each event is
   * stored with its type's current schema version.
   */
  append(streams: readonly StreamAppend[], metadata: AppendMetadata, options?: AppendOptions): Promise<AppendResult>;
  /**
   * Starts a new stream of `aggregate` under an id the store draws from the aggregate's sequence, in
   * the transaction that appends it: ids are never handed out twice and grow from 1, and an id whose
   * append is refused stays taken. `build` makes the append from the id (its first stream the new one,
   * expected 'no_stream'; others as `append`'s); the store calls it while it holds its write lock, so
   * it must be pure and synchronous (the command's rules checked before). Rejects as `append` does, and
   * with whatever `build` throws. `reads`: streams the decision depends on, read by the store under the
   * same lock and given to `build` in that order, so that it decides on what nobody can move before the
   * commit (each from its read model's row: the stream's aggregate must keep one).
   */
  create(aggregate: string, build: (id: number, read: readonly StreamAtVersion[]) => NewAppend, reads?: readonly string[]): Promise<Created>;
}

/** A stream as a creation's build gets it: the state its read-model row holds, and its version (0: no events). */
export interface StreamAtVersion {
  readonly state: unknown;
  readonly version: number;
}

/** What a creation appends: as `append`'s arguments, its first stream the new one. */
export interface NewAppend {
  readonly streams: readonly StreamAppend[];
  readonly metadata: AppendMetadata;
  readonly options?: AppendOptions;
}

/** A committed creation: the id the store drew for it, and the append's result. */
export interface Created extends AppendResult {
  readonly id: number;
}

export interface IdempotencyKeys {
  /** The live (unexpired at `now`) record for that scope and key. */
  find(scope: string, key: string, now: Date): Promise<IdempotencyRecord | undefined>;
}

export interface PetQuery {
  readonly status?: PetStatus;
  readonly limit: number;
  /** Only pets with a greater id (the listing continues after this one). */
  readonly after?: number;
}

/** The read model the listing and the lookup are served from. */
export interface PetCatalog {
  list(query: PetQuery): Promise<Pet[]>;
  get(id: number): Promise<VersionedPet | undefined>;
}

/** A pet and the version of its stream it reflects (what an ETag names). */
export interface VersionedPet {
  readonly pet: Pet;
  readonly version: number;
}

export interface Clock {
  now(): Date;
}

/** Everything the use cases need from the outside world. */
export interface PetStorePorts {
  readonly eventStore: EventStore;
  readonly catalog: PetCatalog;
  readonly idempotencyKeys: IdempotencyKeys;
  readonly clock: Clock;
  /** How long an `Idempotency-Key` is remembered; `IDEMPOTENCY_WINDOW_MS` when absent. */
  readonly idempotencyKeyTtlMs?: number;
}
