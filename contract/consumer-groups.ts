import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import { DEFAULT_GROUP_SETTINGS, GROUP_LIMITS } from '../application/consumer-groups/group-settings.ts';
import { CLOUD_EVENT_TYPES, CloudEventSchema } from './event-feed.ts';
import { NAME_PATTERN } from './schemas.ts';

export const GROUP_NAME_PATTERN = '^[a-z0-9-]{1,64}$';
export const MAX_LEASES_PER_REQUEST = GROUP_LIMITS.claimMax;
export const MAX_WAIT_MS = GROUP_LIMITS.longestWaitMs;
export const MAX_RETRY_AFTER_MS = 3_600_000;
export const MAX_REPLAY_POSITIONS = 1000;
/** A consumer's name and a lease, in Unicode code points: each follows the rule a pet's name follows (`nameProblem`). */
export const CONSUMER_MAX_CODE_POINTS = 64;
export const LEASE_MAX_CODE_POINTS = 200;
const NAME_RULE = 'not only white space; no control characters U+0000 to U+001F';

const Position = (description: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64', description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Timestamp = Type.String({ format: 'date-time' });
const CloudEventTypeName = Type.Union(Object.values(CLOUD_EVENT_TYPES).map((name) => Type.Literal(name)));
const Types = Type.Array(CloudEventTypeName, { minItems: 1, uniqueItems: true, description: 'Only events of these CloudEvents types (the feed\'s `type` names); absent: every type.' });
const AckTimeoutMs = Type.Integer({
  minimum: 1000, maximum: 3_600_000, default: DEFAULT_GROUP_SETTINGS.ackTimeoutMs,
  description: 'A lease not acked (or extended) within this many milliseconds expires: the event counts as delivered once more and is handed out again.',
});
const MaxDeliveries = Type.Integer({
  minimum: 1, maximum: 100, default: DEFAULT_GROUP_SETTINGS.maxDeliveries,
  description: 'Deliveries (claims whose lease expired or was nacked) after which an event is parked with a reason instead of handed out again.',
});
const Start = Type.Union([Type.Literal('beginning'), Type.Literal('end'), Position('After this log position.')], {
  default: DEFAULT_GROUP_SETTINGS.start,
  description: 'Where the group begins: `beginning` (every event of the log), `end` (only events committed after its creation), or after a log position.',
});
const Lease = Type.String({
  minLength: 1, maxLength: LEASE_MAX_CODE_POINTS, pattern: NAME_PATTERN, description: `Opaque: names one handing out of one event (code points; ${NAME_RULE}).`,
});
const Leases = Type.Array(Lease, { minItems: 1, maxItems: MAX_LEASES_PER_REQUEST, uniqueItems: true });

export const NewConsumerGroupSchema = Type.Object(
  { ackTimeoutMs: Type.Optional(AckTimeoutMs), maxDeliveries: Type.Optional(MaxDeliveries), start: Type.Optional(Start), types: Type.Optional(Types) },
  { $id: 'NewConsumerGroup', additionalProperties: false },
);

export const ConsumerGroupSchema = Type.Object(
  {
    group: Type.String({ pattern: GROUP_NAME_PATTERN }),
    checkpoint: Position('Every event at or below it is settled: acked or parked. Never the last event handed out: it can go back down when parked events are replayed.'),
    head: Position("The log's last position."),
    lag: Count('`head` − `checkpoint`.'),
    inFlight: Count('Events under a live lease.'),
    parked: Count('Events parked.'),
    consumers: Type.Array(
      Type.Object(
        { consumer: Type.String(), inFlight: Count('Its live leases.'), lastSeenAt: Type.String({ format: 'date-time', description: 'When it last claimed, or extended a lease.' }) },
        { additionalProperties: false },
      ),
      { description: 'The consumers that claimed within the last `ackTimeoutMs` (at least 30 s, the longest a claim waits), or hold live leases.' },
    ),
    ackTimeoutMs: AckTimeoutMs,
    maxDeliveries: MaxDeliveries,
    start: Start,
    types: Type.Optional(Types),
    createdAt: Timestamp,
  },
  { $id: 'ConsumerGroup', additionalProperties: false },
);

export const ConsumerGroupsSchema = Type.Array(ConsumerGroupSchema, { $id: 'ConsumerGroups' });

export const ClaimRequestSchema = Type.Object(
  {
    consumer: Type.String({
      minLength: 1, maxLength: CONSUMER_MAX_CODE_POINTS, pattern: NAME_PATTERN,
      description: `Who claims: in-flight events are capped per consumer too. 1 to ${CONSUMER_MAX_CODE_POINTS} code points; ${NAME_RULE}.`,
    }),
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: GROUP_LIMITS.claimMax, default: 10, description: 'Events to hand out at most.' })),
    waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_MS, default: 0, description: 'When nothing can be handed out now, wait up to this long for new events.' })),
    acks: Type.Optional(Type.Array(Lease, {
      minItems: 1, maxItems: MAX_LEASES_PER_REQUEST, uniqueItems: true,
      description: 'Leases to ack before claiming (the last batch\'s): one request a batch. Acked even when the claim is refused at a cap; sent again, they come back stale.',
    })),
  },
  { $id: 'ClaimRequest', additionalProperties: false },
);

export const ClaimsSchema = Type.Object(
  {
    claims: Type.Array(Type.Object(
      {
        lease: Lease,
        position: Position("The event's log position."),
        deliveries: Type.Integer({ minimum: 1, description: '1 the first time the event is handed out.' }),
        leaseExpiresAt: Timestamp,
        event: CloudEventSchema,
      },
      { additionalProperties: false },
    )),
    acked: Type.Optional(Count('With `acks`: events acked.')),
    stale: Type.Optional(Type.Array(Lease, { description: 'With `acks`: leases no longer held (acked already, expired, or unknown): not an error.' })),
  },
  { $id: 'Claims', additionalProperties: false },
);

export const LeasesSchema = Type.Object({ leases: Leases }, { $id: 'Leases', additionalProperties: false });

export const NackSchema = Type.Object(
  {
    leases: Leases,
    retryAfterMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_RETRY_AFTER_MS, default: 0, description: 'Hand the events out again no sooner than this.' })),
    park: Type.Optional(Type.Boolean({ description: 'Park the events at once instead.' })),
    release: Type.Optional(Type.Boolean({
      description: 'Hand the events back untried, at once and without counting the delivery: for a worker that stops before it reached them. Not with `park` or `retryAfterMs`.',
    })),
  },
  { $id: 'Nack', additionalProperties: false },
);

const Stale = Type.Array(Lease, { description: 'Leases no longer held (acked already, expired, or unknown): not an error.' });
export const AckedSchema = Type.Object({ acked: Count('Events acked.'), stale: Stale }, { $id: 'Acked', additionalProperties: false });
export const NackedSchema = Type.Object({ nacked: Count('Events handed back or parked.'), stale: Stale }, { $id: 'Nacked', additionalProperties: false });
export const ExtendedSchema = Type.Object(
  { leases: Type.Array(Type.Object({ lease: Lease, leaseExpiresAt: Timestamp }, { additionalProperties: false })), stale: Stale },
  { $id: 'Extended', additionalProperties: false },
);

export const ParkedEventsSchema = Type.Array(
  Type.Object(
    {
      position: Position("The event's log position."),
      reason: Type.String(),
      deliveries: Type.Integer({ minimum: 0 }),
      parkedAt: Timestamp,
      event: CloudEventSchema,
    },
    { additionalProperties: false },
  ),
  { $id: 'ParkedEvents' },
);

export const ReplayParkedSchema = Type.Object(
  { positions: Type.Optional(Type.Array(Position('A parked event.'), { minItems: 1, maxItems: MAX_REPLAY_POSITIONS, uniqueItems: true, description: 'Absent: every parked event.' })) },
  { $id: 'ReplayParked', additionalProperties: false },
);
export const ReplayedSchema = Type.Object({ replayed: Count('Parked events handed back, deliveries from 1.') }, { $id: 'Replayed', additionalProperties: false });

export const CONSUMER_GROUP_COMPONENTS: Record<string, TSchema> = {
  NewConsumerGroup: NewConsumerGroupSchema,
  ConsumerGroup: ConsumerGroupSchema,
  ConsumerGroups: ConsumerGroupsSchema,
  ClaimRequest: ClaimRequestSchema,
  Claims: ClaimsSchema,
  Leases: LeasesSchema,
  Nack: NackSchema,
  Acked: AckedSchema,
  Nacked: NackedSchema,
  Extended: ExtendedSchema,
  ParkedEvents: ParkedEventsSchema,
  ReplayParked: ReplayParkedSchema,
  Replayed: ReplayedSchema,
};
