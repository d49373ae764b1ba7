import { evolve, initialState } from '../domain/index.ts';
import type { PetEvent, PetState } from '../domain/index.ts';
import { StreamVersionConflict, TooMuchContention } from './errors.ts';
import { isoTime } from './iso-time.ts';
import type { ExpectedVersion, IdempotencyRecord, PetStorePorts, RequestContext } from './ports.ts';

/** Attempts when no version is named and concurrent writers keep moving the stream. */
export const COMMAND_ATTEMPTS = 5;

export interface CommandOptions {
  readonly context?: RequestContext;
  /** The stream must not exist yet: nothing to read, and no retry. */
  readonly newStream?: boolean;
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
    const { state, version, position } = options.newStream ? { state: initialState(), version: 0, position: 0 } : await readState(ports, streamId);
    const events = decide(state, version);
    if (events.length === 0) return { state, version, events, position };
    const expected: ExpectedVersion = version === 0 ? 'no_stream' : version;
    const after = events.reduce(evolve, state);
    if (after.kind !== 'present') throw new Error(`the events decided for ${streamId} leave no pet`);
    try {
      const metadata = { recordedAt: isoTime(ports.clock.now()), ...options.context };
      const remember = options.remember?.(after);
      const appended = await ports.eventStore.append(streamId, expected, events, metadata, { petAfter: after.pet, ...(remember ? { remember } : {}) });
      return { state: after, version: appended.version, events, position: appended.position };
    } catch (error) {
      if (!(error instanceof StreamVersionConflict)) throw error;
      options.onConflict?.(error);
      // A new stream's conflict means its id is taken already: deciding again would not help.
      if (options.newStream) throw error;
      if (attempt >= COMMAND_ATTEMPTS) throw new TooMuchContention(streamId, attempt);
    }
  }
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
