import type { EventStore } from '../../application/index.ts';

/** The event store, counting what it appended once the append has committed. */
export function countingEventStore(store: EventStore, countAppended: (eventTypes: readonly string[]) => void): EventStore {
  return {
    readStream: (streamId) => store.readStream(streamId),
    async append(streamId, expected, events, metadata, options) {
      const result = await store.append(streamId, expected, events, metadata, options);
      countAppended(events.map((event) => event.type));
      return result;
    },
    async create(build) {
      // The last build is the one committed: a group that runs again builds again.
      let types: readonly string[] = [];
      const created = await store.create((id) => {
        const stream = build(id);
        types = stream.events.map((event) => event.type);
        return stream;
      });
      countAppended(types);
      return created;
    },
  };
}
