import { header, parameter, BODY_CODES, experimentalOperations, answer, body } from './parts.ts';
import type { Json } from './parts.ts';
import { GROUP_LIMITS } from '../../application/consumer-groups/group-settings.ts';

const GROUP_EXPERIMENTAL =
  'Experimental: not part of interface 1.0.0. A consumer group belongs to the API key that made it, its name within that key: another key is told 404.';

const groupOperation = experimentalOperations('Consumer groups', GROUP_EXPERIMENTAL);

/** Consumer groups (`/consumer-groups`): competing consumers of the log, each operation experimental. */
export const CONSUMER_GROUP_PATHS: Json = {
  '/consumer-groups': {
    get: groupOperation('listConsumerGroups', "This key's consumer groups", 'Each group as `GET /consumer-groups/{group}` shows it, by name.', { 200: answer('The groups', 'ConsumerGroups') }, []),
  },
  '/consumer-groups/{group}': {
    parameters: [parameter('GroupName')],
    put: groupOperation(
      'putConsumerGroup', 'Create a consumer group',
      '201 when created; 200 when it exists with the same settings; 409 `group_exists` when it exists with others. ' +
        'A key has at most 20 groups (409 `limit_reached` past it). A `start` position past the end of the log is 400.',
      { 200: answer('It exists with these settings', 'ConsumerGroup'), 201: answer('Created', 'ConsumerGroup') },
      [...BODY_CODES, 'invalid_path', 'group_exists', 'limit_reached'], body('NewConsumerGroup'),
    ),
    get: groupOperation(
      'getConsumerGroup', 'Where a consumer group stands',
      'Its checkpoint (every event at or below it is acked or parked), the log\'s head, the lag, events in flight and parked, the consumers holding leases, and its settings.',
      { 200: answer('The group', 'ConsumerGroup') }, ['invalid_path', 'not_found'],
    ),
    delete: groupOperation('deleteConsumerGroup', 'Delete a consumer group', 'With its leases and parked events.', { 204: answer('Deleted') }, ['invalid_path', 'not_found']),
  },
  '/consumer-groups/{group}/claims': {
    parameters: [parameter('GroupName')],
    post: groupOperation(
      'claimConsumerGroupEvents', 'Claim events',
      'Up to `max` events under leases, oldest first; an event is handed out only once every earlier event of the same pet in this group is settled. ' +
        'When nothing can go now, waits up to `waitMs` for new commits, then answers `{"claims": []}`. ' +
        `Past the in-flight cap of the group (${GROUP_LIMITS.inFlightPerGroup}) or of the consumer (${GROUP_LIMITS.inFlightPerConsumer}): ` +
        '429 `too_many_in_flight` with `Retry-After` (when the soonest lease expires), never an empty answer. ' +
        `Claims that wait (\`waitMs\` > 0) are bounded: past ${GROUP_LIMITS.waitingClaimsPerKey} of the key or ${GROUP_LIMITS.waitingClaimsPerClient} from the address, 429 \`rate_limited\`; ` +
        'past those the instance lets wait in all (a quarter of its connections), 503 `unavailable`; both with `Retry-After`. ' +
        'At least once: a lease not acked within `ackTimeoutMs` expires and the event is handed out again; be idempotent by the event\'s `id`.',
      { 200: answer('The events claimed', 'Claims') }, [...BODY_CODES, 'invalid_path', 'not_found', 'too_many_in_flight'], body('ClaimRequest'),
    ),
  },
  '/consumer-groups/{group}/acks': {
    parameters: [parameter('GroupName')],
    post: groupOperation(
      'ackConsumerGroupEvents', 'Ack events', 'Settles the events of leases still held; an acked event is never handed out again. Leases no longer held are `stale`, not an error.',
      { 200: answer('Acked', 'Acked') }, [...BODY_CODES, 'invalid_path', 'not_found'], body('Leases'),
    ),
  },
  '/consumer-groups/{group}/nacks': {
    parameters: [parameter('GroupName')],
    post: groupOperation(
      'nackConsumerGroupEvents', 'Nack events',
      'The events of leases still held go out again after `retryAfterMs`, or are parked at once with `park` (or when their `maxDeliveries` are spent). A nack counts as a delivery.',
      { 200: answer('Handed back or parked', 'Nacked') }, [...BODY_CODES, 'invalid_path', 'not_found'], body('Nack'),
    ),
  },
  '/consumer-groups/{group}/extend': {
    parameters: [parameter('GroupName')],
    post: groupOperation(
      'extendConsumerGroupLeases', 'Extend leases', 'Leases still held expire `ackTimeoutMs` from now.',
      { 200: answer('The new expiries', 'Extended') }, [...BODY_CODES, 'invalid_path', 'not_found'], body('Leases'),
    ),
  },
  '/consumer-groups/{group}/parked': {
    parameters: [parameter('GroupName')],
    get: groupOperation(
      'listParkedEvents', 'Parked events', 'By position, a page at a time: `Link: <…>; rel="next"` (RFC 8288) when more follow.',
      { 200: answer('The parked events', 'ParkedEvents', { Link: header('NextParkedLink') }) }, ['invalid_query', 'invalid_path', 'not_found'],
      { parameters: [parameter('Limit'), parameter('ParkedAfter'), parameter('XRequestId')] },
    ),
  },
  '/consumer-groups/{group}/parked/replay': {
    parameters: [parameter('GroupName')],
    post: groupOperation(
      'replayParkedEvents', 'Hand parked events out again',
      'These `positions`, or every parked event, go out again with `deliveries` from 1; handed back a page at a time, never all at once in memory.',
      { 202: answer('Handed back', 'Replayed') }, [...BODY_CODES, 'invalid_path', 'not_found'], body('ReplayParked'),
    ),
  },
};
