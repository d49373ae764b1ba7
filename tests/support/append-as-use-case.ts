import { evolve, initialState } from '../../domain/index.ts';
import type { Pet, PetEvent, PetState } from '../../domain/index.ts';
import type { AppendMetadata, AppendResult, Created, EventStore, ExpectedVersion, IdempotencyRecord } from '../../application/index.ts';

/** The pet that `events` leave, folded onto `state`; undefined when they leave none. */
export function petAfter(events: readonly PetEvent[], state: PetState = initialState()): Pet | undefined {
  const after = events.reduce(evolve, state);
  return after.kind === 'present' ? after.pet : undefined;
}

export type Append = (
  streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: AppendMetadata, options?: { remember?: IdempotencyRecord },
) => Promise<AppendResult>;

/**
 * `eventStore.append` as a use case calls it, handing over the pet its events leave: folded onto what
 * this helper asked to append to the stream before, or onto the stream as read when it knows nothing of it.
 */
export function appendAsUseCase(eventStore: EventStore): Append {
  const known = new Map<string, PetState>();
  return (streamId, expected, events, metadata, options = {}) => {
    const append = (state: PetState) => {
      const pet = petAfter(events, state);
      if (!pet) throw new Error(`the events leave no pet in ${streamId}`);
      // Taken as the stream's state at once, so that appends asked for in one turn stay in one turn (one group).
      const stateAfter: PetState = { kind: 'present', pet };
      known.set(streamId, stateAfter);
      return eventStore.append([{ streamId, expected, events, stateAfter }], metadata, options);
    };
    const state = known.get(streamId);
    if (state || events[0]?.type === 'PetAdded') return append(state ?? initialState());
    return eventStore.readStream(streamId).then((stream) => append(stream.events.reduce((folded, stored) => evolve(folded, stored.event as PetEvent), initialState())));
  };
}

/** One pet stream's append, the pet its events leave named as tests name it: `eventStore.append` of that one stream. */
export function appendPet(
  eventStore: EventStore, streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: AppendMetadata,
  options: { petAfter: Pet; remember?: IdempotencyRecord },
): Promise<AppendResult> {
  const stateAfter: PetState = { kind: 'present', pet: options.petAfter };
  return eventStore.append([{ streamId, expected, events, stateAfter }], metadata, options.remember ? { remember: options.remember } : {});
}

/** A new pet stream as tests build it: the stream, its events, and the pet they leave. */
export interface PetCreation {
  readonly streamId: string;
  readonly events: readonly PetEvent[];
  readonly metadata: AppendMetadata;
  readonly options: { readonly petAfter: Pet; readonly remember?: IdempotencyRecord };
}

/** `eventStore.create` of a pet: the one new stream `build` makes from the id drawn. */
export function createPet(eventStore: Pick<EventStore, 'create'>, build: (id: number) => PetCreation): Promise<Created> {
  return eventStore.create('pet', (id) => {
    const { streamId, events, metadata, options } = build(id);
    const stateAfter: PetState = { kind: 'present', pet: options.petAfter };
    return { streams: [{ streamId, expected: 'no_stream', events, stateAfter }], metadata, ...(options.remember ? { options: { remember: options.remember } } : {}) };
  });
}
