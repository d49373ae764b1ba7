import { evolve, initialState } from '../domain/index.ts';
import type { PetEvent, PetState } from '../domain/index.ts';
import { StreamVersionConflict, TooMuchContention } from './errors.ts';
import { isoTime } from './iso-time.ts';
import type { AppendMetadata, AppendOptions, ExpectedVersion, IdempotencyRecord, PetStorePorts, RequestContext } from './ports.ts';

/** Attempts when no version is named and concurrent writers keep moving the stream. */
export const COMMAND_ATTEMPTS = 5;

export interface CommandOptions {
  readonly context?: RequestContext;
  /** A conflict is the caller's to answer (If-Match named a version): no retry. */
  readonly onConflict?: (error: StreamVersionConflict) => never;
  /** The idempotency record to store with the append, made from the state the command leads to. */
  readonly remember?: (after: PetState) => IdempotencyRecord;
}

export interface CommandOutcome {
  /** The state after the command (unchanged when it decided nothing). */
  readonly state: PetState;
  /** The stream's version after the command. */
  readonly version: number;
  readonly events: readonly PetEvent[];
  /**
   * How new a read must be to see the outcome: the append's log position, or, when the command decided
   * nothing, the position of the stream's last event (0 for a stream that does not exist).
   */
  readonly position: number;
}

/**
 * Every command, one way: read the stream, fold it, `decide`, append at the version read. A concurrent
 * append moves the stream under it: then read and decide again, up to `COMMAND_ATTEMPTS` times.
 */
export async function handleCommand(
  ports: Pick<PetStorePorts, 'eventStore' | 'clock'>,
  streamId: string,
  decide: (state: PetState, version: number) => readonly PetEvent[],
  options: CommandOptions = {},
): Promise<CommandOutcome> {
  for (let attempt = 1; ; attempt++) {
    const { state, version, position } = await readState(ports, streamId);
    const events = decide(state, version);
    if (events.length === 0) return { state, version, events, position };
    const expected: ExpectedVersion = version === 0 ? 'no_stream' : version;
    const { after, appendOptions } = appended(streamId, state, events, options.remember);
    try {
      const result = await ports.eventStore.append(streamId, expected, events, metadataOf(ports, options.context), appendOptions);
      return { state: after, version: result.version, events, position: result.position };
    } catch (error) {
      if (!(error instanceof StreamVersionConflict)) throw error;
      options.onConflict?.(error);
      if (attempt >= COMMAND_ATTEMPTS) throw new TooMuchContention(streamId, attempt);
    }
  }
}

/** A creation's outcome: its command's, and the id the store drew. */
export interface CreationOutcome extends CommandOutcome {
  readonly id: number;
}

/**
 * A command that starts a stream under an id the store draws (`EventStore.create`): `decide` gets the id
 * and the empty state. The store runs it under its write lock, so it must be pure and synchronous: the
 * command's input is checked before. A conflict is not retried: the id was the store's to give.
 */
export async function handleCreation(
  ports: Pick<PetStorePorts, 'eventStore' | 'clock'>,
  streamIdOf: (id: number) => string,
  decide: (id: number, state: PetState) => readonly PetEvent[],
  options: Pick<CommandOptions, 'context' | 'remember'> = {},
): Promise<CreationOutcome> {
  const metadata = metadataOf(ports, options.context);
  const creation = (id: number) => {
    const streamId = streamIdOf(id);
    const events = decide(id, initialState());
    if (events.length === 0) throw new Error(`the command decided nothing to start ${streamId}`);
    return { streamId, events, ...appended(streamId, initialState(), events, options.remember) };
  };
  const created = await ports.eventStore.create((id) => {
    const { streamId, events, appendOptions } = creation(id);
    return { streamId, events, metadata, options: appendOptions };
  });
  // Decided again from the id given: `decide` is pure, so this is what was appended.
  const { events, after } = creation(created.id);
  return { id: created.id, state: after, version: created.version, events, position: created.position };
}

/** What the store is told beside the events: when, and on whose behalf. */
function metadataOf(ports: Pick<PetStorePorts, 'clock'>, context: RequestContext | undefined): AppendMetadata {
  return { recordedAt: isoTime(ports.clock.now()), ...context };
}

/** The state `events` lead to from `state` (it must hold a pet), and what the append stores with them. */
function appended(
  streamId: string, state: PetState, events: readonly PetEvent[], remember: CommandOptions['remember'],
): { after: PetState; appendOptions: AppendOptions } {
  const after = events.reduce(evolve, state);
  if (after.kind !== 'present') throw new Error(`the events decided for ${streamId} leave no pet`);
  const record = remember?.(after);
  return { after, appendOptions: { petAfter: after.pet, ...(record ? { remember: record } : {}) } };
}

/** A stream's current state, folded from its events, its version, and the log position of its last event (0 when none). */
export async function readState(
  ports: Pick<PetStorePorts, 'eventStore'>,
  streamId: string,
): Promise<{ state: PetState; version: number; position: number }> {
  const stream = await ports.eventStore.readStream(streamId);
  return {
    state: stream.events.reduce((state, stored) => evolve(state, stored.event), initialState()),
    version: stream.version,
    position: stream.events.at(-1)?.position ?? 0,
  };
}
