import { Type } from '@sinclair/typebox';
import { POSITIVE_INTEGER_DIGITS, POSITIVE_INTEGER_PATTERN } from './decimal-integer.ts';
import { PET_STATUSES } from '../domain/index.ts';
import { AGGREGATES, DEFAULT_EVENT_LIMIT, eventTypeOf, MAX_EVENT_LIMIT, eventTypeNamed as registeredTypeNamed } from '../application/index.ts';

/** What an event stream's `retry:` tells a client to wait before reconnecting, in milliseconds. */
export const RECONNECT_MS = 2000;

/**
 * The CloudEvents `type` of each event type: stable names that consumers filter on and store. A change
 * of an event's shape that a consumer would notice gets a new name (`.v2`), never the old one.
 */
export const CLOUD_EVENT_TYPES = Object.freeze(Object.fromEntries(AGGREGATES.flatMap((aggregate) =>
  Object.entries(aggregate.events).map(([type, shape]) => [type, shape.cloudEventType])))) as Readonly<Record<ProductEventType, string>>;

/** The event types of the product's aggregates. */
export type ProductEventType = EventTypesOf<(typeof AGGREGATES)[number]>;
type EventTypesOf<A> = A extends { readonly events: infer Shapes } ? keyof Shapes & string : never;

/** The event type a CloudEvents `type` names, if any: of any aggregate registered. */
export function eventTypeNamed(cloudEventType: string): string | undefined {
  return registeredTypeNamed(cloudEventType);
}

/** The CloudEvents `type` of an event type registered (the type itself when none is). */
export function cloudEventTypeOf(type: string): string {
  return eventTypeOf(type)?.shape.cloudEventType ?? type;
}

const NullableStatus = Type.Union([...PET_STATUSES.map((status) => Type.Literal(status)), Type.Null()]);
const PetIdField = Type.Integer({ minimum: 1, format: 'int64' });

export const PetAddedDataSchema = Type.Object(
  { id: PetIdField, name: Type.String(), categoryId: Type.Integer({ format: 'int64' }), status: NullableStatus },
  { additionalProperties: false, description: `The data of ${CLOUD_EVENT_TYPES.PetAdded}: the pet as it was added (status null: none).` },
);

export const PetStatusChangedDataSchema = Type.Object(
  {
    id: PetIdField, from: NullableStatus, to: Type.Union(PET_STATUSES.map((status) => Type.Literal(status))),
    orderId: Type.Optional(Type.Integer({ minimum: 1, format: 'int64', description: 'The store order that moved the pet: reserved (pending), sold or freed it.' })),
  },
  { additionalProperties: false, description: `The data of ${CLOUD_EVENT_TYPES.PetStatusChanged}: the status before (null: none) and after.` },
);

const OrderIdField = Type.Integer({ minimum: 1, format: 'int64' });

export const OrderPlacedDataSchema = Type.Object(
  { id: OrderIdField, petId: PetIdField, shipDate: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false, description: `The data of ${CLOUD_EVENT_TYPES.OrderPlaced}: the order as placed (shipDate null: none); its pet's reservation is the event after it.` },
);

export const OrderMovedDataSchema = Type.Object(
  { id: OrderIdField },
  { additionalProperties: false, description: `The data of ${CLOUD_EVENT_TYPES.OrderApproved}, ${CLOUD_EVENT_TYPES.OrderDelivered} and ${CLOUD_EVENT_TYPES.OrderCancelled}: the order; what it did to its pet is the pet's event of the same commit.` },
);

/** One event of the log in CloudEvents 1.0 structured JSON. */
export const CloudEventSchema = Type.Object(
  {
    specversion: Type.Literal('1.0'),
    id: Type.String({ pattern: POSITIVE_INTEGER_PATTERN, description: 'The position in the log, as decimal digits; the SSE `id:` of its message.' }),
    source: Type.String({ format: 'uri', description: "The deployment's public base address." }),
    type: Type.Union(Object.values(CLOUD_EVENT_TYPES).map((name) => Type.Literal(name))),
    subject: Type.String({
      pattern: `^(pets|store/orders)/${POSITIVE_INTEGER_DIGITS}$`, description: 'The stream the event belongs to: `pets/{id}` or `store/orders/{id}`, the same for all its events.',
    }),
    time: Type.String({ format: 'date-time', description: 'When the event was recorded.' }),
    datacontenttype: Type.Literal('application/json'),
    data: Type.Union([PetAddedDataSchema, PetStatusChangedDataSchema, OrderPlacedDataSchema, OrderMovedDataSchema]),
  },
  { $id: 'CloudEvent', additionalProperties: false },
);

export const CloudEventsSchema = Type.Array(CloudEventSchema, { $id: 'CloudEvents' });

export const EventLimitSchema = Type.Integer({
  minimum: 1, maximum: MAX_EVENT_LIMIT, default: DEFAULT_EVENT_LIMIT, description: 'Page size of the JSON answer: plain decimal digits.',
});
export const EventAfterSchema = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  format: 'int64',
  default: 0,
  description: 'Only events after this position (exclusive): plain decimal digits. In a stream, `Last-Event-ID` takes precedence.',
});

/**
 * What a stream begins with, as the reference page shows it: `retry:` once, then one message a
 * CloudEvent (`id:` its position, `data:` the event as in the JSON answer). `retry` is the stream's own.
 */
export function eventStreamExample(retryMs: number): string {
  const source = 'https://petstore.example/v1';
  const events = [
    { id: '41', type: CLOUD_EVENT_TYPES.PetAdded, subject: 'pets/7', time: '2026-05-01T09:30:00.000Z', data: { id: 7, name: 'Rex', categoryId: 1, status: 'available' } },
    { id: '42', type: CLOUD_EVENT_TYPES.PetStatusChanged, subject: 'pets/7', time: '2026-05-01T10:02:13.250Z', data: { id: 7, from: 'available', to: 'sold' } },
  ];
  const messages = events.map(({ id, type, subject, time, data }) =>
    `id: ${id}\ndata: ${JSON.stringify({ specversion: '1.0', id, source, type, subject, time, datacontenttype: 'application/json', data })}\n\n`);
  return `retry: ${retryMs}\n\n${messages.join('')}`;
}
