import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import type { Attributes, Span, SpanOptions } from '@opentelemetry/api';
import { ATTR_DB_COLLECTION_NAME, ATTR_DB_OPERATION_NAME, ATTR_DB_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';
import type { EventStore, IdempotencyKeys, NewAppend, PetCatalog, PetStorePorts, PetUseCases, StreamAppend } from '../../application/index.ts';
import type { WriteObserver } from '../store/write/write-observer.ts';
import type { Spans } from './spans.ts';

export const ATTR_PET_ID = 'petstore.pet.id';
export const ATTR_STREAM_ID = 'petstore.stream.id';
/** The version the append expected the stream at; 0: the stream must not exist yet. */
export const ATTR_EXPECTED_VERSION = 'petstore.stream.expected_version';
/** The stream's version after the append. */
export const ATTR_STREAM_VERSION = 'petstore.stream.version';
export const ATTR_EVENT_TYPES = 'petstore.event.types';
/** The log position of the append's last event. */
export const ATTR_LOG_POSITION = 'petstore.log.position';
/** How many writes shared the append's commit (SQLite's group commit). */
export const ATTR_GROUP_SIZE = 'petstore.commit.group_size';
// Development-stage in the semantic conventions, so not taken from their stable entry point.
const ATTR_DB_RETURNED_ROWS = 'db.response.returned_rows';

export type DatabaseSystem = 'sqlite' | 'postgresql';

/** The ports with a span around each call: a CLIENT span per query, an INTERNAL one per append and per creation. */
export function tracePorts(spans: Spans, ports: PetStorePorts, databaseSystem: DatabaseSystem): PetStorePorts {
  const select = (table: string, attributes: Attributes): SpanOptions => ({
    kind: SpanKind.CLIENT,
    attributes: { [ATTR_DB_SYSTEM_NAME]: databaseSystem, [ATTR_DB_OPERATION_NAME]: 'SELECT', [ATTR_DB_COLLECTION_NAME]: table, ...attributes },
  });
  const returned = <T>(span: Span, rows: number, value: T): T => {
    span.setAttribute(ATTR_DB_RETURNED_ROWS, rows);
    return value;
  };
  // The first stream's id and expected version (the one the command is about), every stream's event types.
  const streamAttributes = (streams: readonly StreamAppend[]): Attributes => ({
    [ATTR_STREAM_ID]: streams[0]?.streamId ?? '',
    [ATTR_EXPECTED_VERSION]: streams[0] === undefined || streams[0].expected === 'no_stream' ? 0 : streams[0].expected,
    [ATTR_EVENT_TYPES]: streams.flatMap((stream) => stream.events.map((event) => event.type)),
  });
  const appending = (streams: readonly StreamAppend[]): SpanOptions => ({
    kind: SpanKind.INTERNAL,
    attributes: { [ATTR_DB_SYSTEM_NAME]: databaseSystem, ...streamAttributes(streams) },
  });

  const { eventStore, catalog, idempotencyKeys } = ports;
  const tracedEventStore: EventStore = {
    readStream: (streamId) =>
      spans.run('SELECT events', select('events', { [ATTR_STREAM_ID]: streamId }), async (span) => {
        const read = await eventStore.readStream(streamId);
        return returned(span, read.events.length, read);
      }),
    append: (streams, metadata, options) =>
      spans.run('append', appending(streams), async (span) => {
        const result = await eventStore.append(streams, metadata, options);
        span.setAttributes({ [ATTR_STREAM_VERSION]: result.version, [ATTR_LOG_POSITION]: result.position });
        return result;
      }),
    // The id is drawn by the group that appends it: the span covers the draw, the append and the commit.
    create: (aggregate, build, reads) =>
      spans.run('create', { kind: SpanKind.INTERNAL, attributes: { [ATTR_DB_SYSTEM_NAME]: databaseSystem, [ATTR_EXPECTED_VERSION]: 0 } }, async (span) => {
        // The last build is the one committed: a group that runs again builds again.
        let built: NewAppend | undefined;
        const created = await eventStore.create(aggregate, (id, read) => (built = build(id, read)), reads);
        span.setAttributes({
          // `petstore.<aggregate>.id`: the id drawn, named as the aggregate's spans name it (`petstore.pet.id`).
          [`petstore.${aggregate}.id`]: created.id, ...streamAttributes(built!.streams), [ATTR_EXPECTED_VERSION]: 0,
          [ATTR_STREAM_VERSION]: created.version, [ATTR_LOG_POSITION]: created.position,
        });
        return created;
      }),
  };
  const tracedCatalog: PetCatalog = {
    list: (query) =>
      spans.run('SELECT pets', select('pets', listingAttributes(query)), async (span) => {
        const pets = await catalog.list(query);
        return returned(span, pets.length, pets);
      }),
    get: (id) =>
      spans.run('SELECT pets', select('pets', { [ATTR_PET_ID]: id }), async (span) => {
        const found = await catalog.get(id);
        return returned(span, found === undefined ? 0 : 1, found);
      }),
  };
  const tracedIdempotencyKeys: IdempotencyKeys = {
    find: (scope, key, now) =>
      spans.run('SELECT idempotency_keys', select('idempotency_keys', {}), async (span) => {
        const record = await idempotencyKeys.find(scope, key, now);
        return returned(span, record === undefined ? 0 : 1, record);
      }),
  };
  return { ...ports, eventStore: tracedEventStore, catalog: tracedCatalog, idempotencyKeys: tracedIdempotencyKeys };
}

function listingAttributes(query: { readonly status?: string | undefined; readonly limit?: number | undefined; readonly after?: number | undefined }): Attributes {
  return {
    ...(query.status === undefined ? {} : { 'petstore.listing.status': query.status }),
    ...(query.limit === undefined ? {} : { 'petstore.listing.limit': query.limit }),
    ...(query.after === undefined ? {} : { 'petstore.listing.after': query.after }),
  };
}

/** The use cases, each in an INTERNAL span named after it. */
export function traceUseCases(spans: Spans, useCases: PetUseCases): PetUseCases {
  const internal = (attributes: Attributes = {}): SpanOptions => ({ kind: SpanKind.INTERNAL, attributes });
  return Object.freeze({
    addPet: (...args: Parameters<PetUseCases['addPet']>) =>
      spans.run('addPet', internal(), async (span) => {
        const added = await useCases.addPet(...args);
        span.setAttribute(ATTR_PET_ID, added.pet.id);
        return added;
      }),
    changePetStatus: (...args: Parameters<PetUseCases['changePetStatus']>) =>
      spans.run('changePetStatus', internal({ [ATTR_PET_ID]: args[1].id }), () => useCases.changePetStatus(...args)),
    getPet: (...args: Parameters<PetUseCases['getPet']>) =>
      spans.run('getPet', internal({ [ATTR_PET_ID]: args[1] }), () => useCases.getPet(...args)),
    listPetPage: (...args: Parameters<PetUseCases['listPetPage']>) =>
      spans.run('listPets', internal(listingAttributes(args[1] ?? {})), () => useCases.listPetPage(...args)),
  });
}

/**
 * The wait for the commit, where the store commits in groups: a `commit` span under the append,
 * covering the group's transaction, and the group's size on the append. The times are
 * `performance.now()` readings, which the SDK takes as such.
 */
export function observeWrites(spans: Spans): WriteObserver {
  return () => {
    const append = trace.getSpan(spans.current());
    if (!append?.isRecording()) return undefined;
    return ({ size, began, committed }) => {
      append.setAttribute(ATTR_GROUP_SIZE, size);
      const commit = spans.tracer.startSpan(
        'commit',
        { kind: SpanKind.INTERNAL, startTime: began, attributes: { [ATTR_DB_SYSTEM_NAME]: 'sqlite', [ATTR_GROUP_SIZE]: size } },
        trace.setSpan(ROOT_CONTEXT, append),
      );
      commit.end(committed);
    };
  };
}
