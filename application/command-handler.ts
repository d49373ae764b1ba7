import type { Aggregate, DomainEvent } from './aggregate.ts';
import { foldEvents } from './aggregate-registry.ts';
import { StreamVersionConflict, TooMuchContention } from './errors.ts';
import { isoTime } from './iso-time.ts';
import type { AppendMetadata, ExpectedVersion, IdempotencyRecord, PetStorePorts, RequestContext, StreamAppend } from './ports.ts';

/** Attempts when no version is named and concurrent writers keep moving a stream. */
export const COMMAND_ATTEMPTS = 5;

/** A stream a decision reads and may append to: which aggregate's, and which. */
export interface StreamRef<State = unknown, Event extends DomainEvent = DomainEvent> {
  readonly aggregate: Aggregate<State, Event>;
  readonly streamId: string;
}

/** A stream as read: its state folded from its events, its version, the log position of its last event (0: none). */
export interface StreamState<State> {
  readonly state: State;
  readonly version: number;
  readonly position: number;
}

type StateOf<R> = R extends StreamRef<infer S, any> ? S : never;
type EventOf<R> = R extends StreamRef<any, infer E> ? E : never;
/** The streams of a decision, as read. */
export type StatesOf<T extends readonly StreamRef<any, any>[]> = { readonly [K in keyof T]: StreamState<StateOf<T[K]>> };
/** What a decision appends to each of its streams (an empty list: nothing, but the version read still holds). */
export type EventsOf<T extends readonly StreamRef<any, any>[]> = { readonly [K in keyof T]: readonly EventOf<T[K]>[] };

export interface CommandOptions<States> {
  readonly context?: RequestContext;
  /** A conflict is the caller's to answer (If-Match named a version): no retry. */
  readonly onConflict?: (error: StreamVersionConflict) => void;
  /** The idempotency record to store with the append, made from the states the command leads to. */
  readonly remember?: (after: States) => IdempotencyRecord;
}

export interface CommandOutcome<States> {
  /** Each stream after the command (unchanged when it decided nothing for it), its version after. */
  readonly states: States;
  readonly events: readonly (readonly DomainEvent[])[];
  /**
   * How new a read must be to see the outcome: the append's log position, or, when the command decided
   * nothing, the position of the newest event of its streams (0 when none exists).
   */
  readonly position: number;
}

/**
 * Every command, one way (Emmett's `handleCommand`, over any number of streams): 1. read each stream
 * the decision depends on and fold it; 2. decide; 3. append what was decided to every stream, each at
 * the version read, in one commit. A concurrent append moves a stream under it: then read and decide
 * again, up to `COMMAND_ATTEMPTS` times.
 */
export async function handleCommand<const T extends readonly StreamRef<any, any>[]>(
  ports: Pick<PetStorePorts, 'eventStore' | 'clock'>,
  streams: T,
  decide: (read: StatesOf<T>) => EventsOf<T>,
  options: CommandOptions<StatesOf<T>> = {},
): Promise<CommandOutcome<StatesOf<T>>> {
  for (let attempt = 1; ; attempt++) {
    const read = await Promise.all(streams.map((stream) => readState(ports, stream))) as unknown as StatesOf<T>;
    const decided = decide(read) as readonly (readonly DomainEvent[])[];
    const reads = read as readonly StreamState<unknown>[];
    if (decided.every((events) => events.length === 0)) {
      return { states: read, events: decided, position: Math.max(0, ...reads.map((each) => each.position)) };
    }
    const appends = streams.map((stream, index) => appended(stream, reads[index]!, decided[index]!));
    const after = appends.map((each, index) => ({ state: each.stateAfter, version: reads[index]!.version + decided[index]!.length, position: 0 })) as unknown as StatesOf<T>;
    const record = options.remember?.(after);
    try {
      const result = await ports.eventStore.append(appends, metadataOf(ports, options.context), record ? { remember: record } : {});
      const states = (after as readonly StreamState<unknown>[]).map((each) => ({ ...each, position: result.position })) as unknown as StatesOf<T>;
      return { states, events: decided, position: result.position };
    } catch (error) {
      if (!(error instanceof StreamVersionConflict)) throw error;
      options.onConflict?.(error);
      if (attempt >= COMMAND_ATTEMPTS) throw new TooMuchContention(error.streamId, attempt);
    }
  }
}

/** A creation's outcome: the new stream's state and version, the id the store drew, and the position. */
export interface CreationOutcome<State> {
  readonly id: number;
  readonly state: State;
  readonly version: number;
  readonly events: readonly DomainEvent[];
  readonly position: number;
}

/** Streams as a creation's decision reads them under the store's write lock: each one's state and version. */
export type AtVersionsOf<T extends readonly StreamRef<any, any>[]> = { readonly [K in keyof T]: { readonly state: StateOf<T[K]>; readonly version: number } };

export interface CreationOptions<State, T extends readonly StreamRef<any, any>[] = []> {
  readonly context?: RequestContext;
  readonly remember?: (after: State, id: number) => IdempotencyRecord;
  /**
   * Streams the decision reads and appends to in the same commit: the store reads each under its write
   * lock (its read-model row and its version, see `EventStore.create`) and hands them to `decide` and
   * `alongside`, so that nothing moves them between the decision and the commit.
   */
  readonly reads?: T;
  /** What the decision appends to each stream of `reads` (nothing: the version read still holds). */
  readonly alongside?: (id: number, read: AtVersionsOf<T>) => EventsOf<T>;
}

/**
 * A command that starts a stream under an id the store draws (`EventStore.create`): `decide` gets the id,
 * the aggregate's start and the streams of `options.reads` as read. The store runs it under its write
 * lock, so it must be pure and synchronous: the command's input is checked before. It is decided once for
 * the id committed: the answer is the decision the store appended. A conflict is not retried here: the
 * id was the store's to give.
 */
export async function handleCreation<State, Event extends DomainEvent, const T extends readonly StreamRef<any, any>[] = []>(
  ports: Pick<PetStorePorts, 'eventStore' | 'clock'>,
  aggregate: Aggregate<State, Event>,
  decide: (id: number, state: State, read: AtVersionsOf<T>) => readonly Event[],
  options: CreationOptions<State, T> = {},
): Promise<CreationOutcome<State>> {
  const metadata = metadataOf(ports, options.context);
  const reads: readonly StreamRef<any, any>[] = options.reads ?? [];
  // The decision the store built its append from, kept for the answer: a batch that runs again builds
  // again under another id, so the one kept is the last, and it is the one for the id the store gives back.
  let decided: { readonly id: number; readonly events: readonly Event[]; readonly stateAfter: State } | undefined;
  const created = await ports.eventStore.create(aggregate.name, (id, atVersions) => {
    const streamId = `${aggregate.streamPrefix}${id}`;
    const read = atVersions as unknown as AtVersionsOf<T>;
    const events = decide(id, aggregate.initialState(), read);
    if (events.length === 0) throw new Error(`the command decided nothing to start ${streamId}`);
    const stateAfter = foldEvents(aggregate, events);
    decided = { id, events, stateAfter };
    const record = options.remember?.(stateAfter, id);
    const alongside = (options.alongside?.(id, read) ?? []) as readonly (readonly DomainEvent[])[];
    const streams: StreamAppend[] = [{ streamId, expected: 'no_stream', events, stateAfter }];
    for (let index = 0; index < reads.length; index++) streams.push(appended(reads[index]!, atVersions[index]!, alongside[index] ?? []));
    return record ? { streams, metadata, options: { remember: record } } : { streams, metadata };
  }, reads.map((stream) => stream.streamId));
  if (decided?.id !== created.id) throw new Error(`the store committed ${aggregate.streamPrefix}${created.id} without building it`);
  return { id: created.id, state: decided.stateAfter, version: created.version, events: decided.events, position: created.position };
}

/** What the store is told beside the events: when, and on whose behalf. */
function metadataOf(ports: Pick<PetStorePorts, 'clock'>, context: RequestContext | undefined): AppendMetadata {
  return { recordedAt: isoTime(ports.clock.now()), ...context };
}

/** One stream's part of the append: the events decided for it, at the version read, and the state they leave. */
function appended(stream: StreamRef<any, any>, read: Pick<StreamState<unknown>, 'state' | 'version'>, events: readonly DomainEvent[]): StreamAppend {
  const expected: ExpectedVersion = read.version === 0 ? 'no_stream' : read.version;
  return { streamId: stream.streamId, expected, events, stateAfter: foldEvents(stream.aggregate, events, read.state) };
}

/** A stream's current state, folded from its events, its version, and the log position of its last event (0 when none). */
export async function readState<State>(ports: Pick<PetStorePorts, 'eventStore'>, stream: StreamRef<State, any>): Promise<StreamState<State>> {
  const read = await ports.eventStore.readStream(stream.streamId);
  return {
    state: foldEvents(stream.aggregate, read.events.map((stored) => stored.event)),
    version: read.version,
    position: read.events.at(-1)?.position ?? 0,
  };
}
