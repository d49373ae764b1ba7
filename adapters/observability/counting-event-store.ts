import type { EventStore, StreamAppend } from '../../application/index.ts';

const typesOf = (streams: readonly StreamAppend[]) => streams.flatMap((stream) => stream.events.map((event) => event.type));

/** The event store, counting what it appended once the append has committed. */
export function countingEventStore(store: EventStore, countAppended: (eventTypes: readonly string[]) => void): EventStore {
  return {
    readStream: (streamId) => store.readStream(streamId),
    async append(streams, metadata, options) {
      const result = await store.append(streams, metadata, options);
      countAppended(typesOf(streams));
      return result;
    },
    async create(aggregate, build, reads) {
      // The last build is the one committed: a batch that runs again builds again.
      let types: readonly string[] = [];
      const created = await store.create(aggregate, (id, read) => {
        const append = build(id, read);
        types = typesOf(append.streams);
        return append;
      }, reads);
      countAppended(types);
      return created;
    },
  };
}
