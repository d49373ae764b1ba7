import { STATUS_CODES } from 'node:http';
import type { TSchema } from '@sinclair/typebox';
import { DECIMAL_INTEGER_PATTERN, POSITIVE_INTEGER_PATTERN } from './decimal-integer.ts';
import { IF_MATCH_PATTERN } from './entity-tags.ts';
import { GET_PET_DEPRECATION, GET_PET_SUNSET } from './deprecations.ts';
import { ERROR_STATUS } from './error-codes.ts';
import type { ErrorCode } from './error-codes.ts';
import {
  AfterSchema, ErrorSchema, LimitSchema, NewPetSchema, PetIdSchema, PetSchema, PetsSchema, PetStatusSchema, StatusPatchSchema,
} from './schemas.ts';
import { CloudEventSchema, CloudEventsSchema, EventAfterSchema, EventLimitSchema, CLOUD_EVENT_TYPES, eventStreamExample, RECONNECT_MS } from './event-feed.ts';
import {
  NewWebhookSchema, WebhookAttemptSchema, WebhookAttemptsBeforeSchema, WebhookAttemptsSchema, WebhookCreatedSchema, WebhookDeliveriesSchema, WebhookReplaySchema,
  WebhookSchema, WebhookSecretRotatedSchema, WebhooksSchema,
} from './webhooks.ts';
import { CONSUMER_GROUP_COMPONENTS, GROUP_NAME_PATTERN } from './consumer-groups.ts';
import { InventorySchema, NewOrderSchema, OrderIdParameterSchema, OrderPatchSchema, OrderSchema, OrdersSchema, OrderStatusSchema } from './orders.ts';

/** The interface version the document describes (not the package's). */
export const INTERFACE_VERSION = '1.0.0';

export interface OpenApiServer {
  readonly url: string;
  readonly description: string;
}

/** An OpenAPI 3.1 document: plain JSON. */
export type OpenApiDocument = { readonly openapi: '3.1.0' } & Record<string, unknown>;

type Json = Record<string, unknown>;

/**
 * Production and staging as configured, plus the serving instance when it is neither (a development
 * server), so "try it" on the reference page calls the server that showed it. A deployment whose
 * address is not configured is left out rather than shown with an invented address.
 */
export function openApiServers(deployments: { productionUrl: string | undefined; stagingUrl: string | undefined }, currentBaseUrl: string): OpenApiServer[] {
  const servers: OpenApiServer[] = [];
  if (deployments.productionUrl) servers.push({ url: deployments.productionUrl, description: 'production' });
  if (deployments.stagingUrl) servers.push({ url: deployments.stagingUrl, description: 'staging' });
  if (!servers.some((server) => server.url === currentBaseUrl)) servers.unshift({ url: currentBaseUrl, description: 'this server (development)' });
  return servers;
}

// The components, by the $id their TypeBox schema carries: a nested schema with one of these ids becomes a $ref.
const COMPONENT_SCHEMAS: Record<string, TSchema> = {
  Pet: PetSchema,
  NewPet: NewPetSchema,
  Pets: PetsSchema,
  PetStatus: PetStatusSchema,
  StatusPatch: StatusPatchSchema,
  Error: ErrorSchema,
  CloudEvent: CloudEventSchema,
  CloudEvents: CloudEventsSchema,
  NewWebhook: NewWebhookSchema,
  Webhook: WebhookSchema,
  WebhookCreated: WebhookCreatedSchema,
  Webhooks: WebhooksSchema,
  WebhookDeliveries: WebhookDeliveriesSchema,
  WebhookAttempt: WebhookAttemptSchema,
  WebhookAttempts: WebhookAttemptsSchema,
  WebhookReplay: WebhookReplaySchema,
  WebhookSecretRotated: WebhookSecretRotatedSchema,
  ...CONSUMER_GROUP_COMPONENTS,
  Order: OrderSchema,
  NewOrder: NewOrderSchema,
  Orders: OrdersSchema,
  OrderStatus: OrderStatusSchema,
  OrderPatch: OrderPatchSchema,
  Inventory: InventorySchema,
};

/**
 * A validating TypeBox schema as the document shows it: nested components become $refs, and a union of
 * string literals (what TypeBox compiles and checks) becomes the `enum` readers and generators expect.
 */
export function documentSchema(schema: unknown, root = true): unknown {
  if (Array.isArray(schema)) return schema.map((item) => documentSchema(item, false));
  if (typeof schema !== 'object' || schema === null) return schema;
  const record = schema as Json;
  if (!root && typeof record.$id === 'string' && record.$id in COMPONENT_SCHEMAS) return { $ref: schemaRef(record.$id) };
  const result: Json = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === '$id') continue;
    if (key === 'properties') {
      result.properties = Object.fromEntries(Object.entries(value as Json).map(([name, property]) => [name, documentSchema(property, false)]));
    } else if (key === 'anyOf' && isStringLiterals(value)) {
      result.type = 'string';
      result.enum = value.map((literal) => literal.const);
    } else {
      result[key] = documentSchema(value, false);
    }
  }
  return result;
}

function isStringLiterals(value: unknown): value is { const: string }[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof (item as Json)?.const === 'string');
}

function schemaRef(name: string): string {
  return `#/components/schemas/${name}`;
}

const json = (schemaName: string) => ({ 'application/json': { schema: { $ref: schemaRef(schemaName) } } });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const parameter = (name: string) => ({ $ref: `#/components/parameters/${name}` });

// Codes any pet operation can answer: Node's parser, the key check and the rate limit (when it is on)
// come before the operation itself.
const EVERY_OPERATION: readonly ErrorCode[] = ['invalid_header', 'unauthorized', 'rate_limited', 'request_timeout', 'headers_too_large', 'internal', 'unavailable'];
const BODY_CODES: readonly ErrorCode[] = ['invalid_body', 'malformed_json', 'unsupported_media_type', 'payload_too_large'];

/**
 * The error answers of an operation, one per status, each naming exactly the codes it may carry
 * (a code always comes with one status: ERROR_STATUS).
 */
function errorResponses(codes: readonly ErrorCode[], extraHeaders: Json = {}): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...EVERY_OPERATION, ...codes]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, statusCodes]) => {
    // 408 and 431 come from Node's parser, before any route: they carry no operation's headers.
    const headers: Json = { 'X-Request-Id': header('XRequestId'), ...(status === 408 || status === 431 ? {} : extraHeaders) };
    if (status === 401) headers['WWW-Authenticate'] = header('WWWAuthenticate');
    if (status === 503) headers['Retry-After'] = header('RetryAfter');
    // The rate limit is counted after the key check: every answer past it carries the quota, a 429 also Retry-After.
    if (status !== 401 && status !== 408 && status !== 431) Object.assign(headers, RATE_LIMIT_HEADERS);
    if (status === 429) headers['Retry-After'] = header('RetryAfter');
    return [String(status), {
      description: `${STATUS_CODES[status]}: ${statusCodes.join(', ')}`,
      headers,
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: schemaRef('Error') },
              { type: 'object', properties: { code: { type: 'string', enum: statusCodes }, status: { type: 'integer', const: status } } },
            ],
          },
        },
      },
    }];
  }));
}

const RATE_LIMIT_HEADERS = { 'RateLimit-Policy': header('RateLimitPolicy'), RateLimit: header('RateLimit') };
const DEPRECATION_HEADERS = { Deprecation: header('Deprecation'), Sunset: header('Sunset'), Link: header('SuccessorLink') };

const WEBHOOK_EXPERIMENTAL =
  'Experimental: not part of interface 1.0.0. A subscription belongs to the API key that made it: another key is told 404.';
const withRequestId = { 'X-Request-Id': header('XRequestId') };

/** The subscription resource (`/webhooks`), each operation experimental. */
const WEBHOOK_PATHS: Json = {
  '/webhooks': {
    post: {
      operationId: 'createWebhook',
      tags: ['Webhooks'],
      summary: 'Subscribe a URL to the log (experimental)',
      description:
        `${WEBHOOK_EXPERIMENTAL} From now on, each event of the chosen types (absent: all) is POSTed to \`url\`, alone, in log order, ` +
        'signed as Standard Webhooks says (see `webhooks.petEvent`). A 2xx within 10 s moves on to the next event; `410 Gone` disables the ' +
        'subscription until resumed; anything else is retried on the Standard Webhooks schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h: ' +
        'about 3 days; a 429 or 503 with `Retry-After` waits at least that long), then the subscription is `failing` until resumed. ' +
        '`maxPerSecond` caps the requests a second to the receiver. A key has at most 100 subscriptions by default (409 `limit_reached`). ' +
        'A URL that is not http(s), or whose host is or resolves to a loopback, private, link-local or reserved address, is refused with 400 `invalid_body`. ' +
        'The answer holds the signing `secret`: it is never shown again.',
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      requestBody: { required: true, content: json('NewWebhook') },
      responses: {
        201: { description: 'Subscribed: the subscription and its secret', headers: { ...withRequestId, Location: header('WebhookLocation'), ...RATE_LIMIT_HEADERS }, content: json('WebhookCreated') },
        ...errorResponses([...BODY_CODES, 'limit_reached']),
      },
    },
    get: {
      operationId: 'listWebhooks',
      tags: ['Webhooks'],
      summary: "This key's subscriptions (experimental)",
      description: `${WEBHOOK_EXPERIMENTAL} Every subscription of the calling key, oldest first; never a secret.`,
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      responses: {
        200: { description: 'The subscriptions', headers: { ...withRequestId, ...RATE_LIMIT_HEADERS }, content: json('Webhooks') },
        ...errorResponses([]),
      },
    },
  },
  '/webhooks/{id}': {
    parameters: [parameter('WebhookId')],
    get: {
      operationId: 'getWebhook',
      tags: ['Webhooks'],
      summary: 'One subscription (experimental)',
      description: WEBHOOK_EXPERIMENTAL,
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      responses: {
        200: { description: 'The subscription', headers: { ...withRequestId, ...RATE_LIMIT_HEADERS }, content: json('Webhook') },
        ...errorResponses(['not_found']),
      },
    },
    delete: {
      operationId: 'deleteWebhook',
      tags: ['Webhooks'],
      summary: 'Unsubscribe (experimental)',
      description: `${WEBHOOK_EXPERIMENTAL} Delivery stops; an attempt already in flight may still arrive.`,
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      responses: {
        204: { description: 'Deleted', headers: { ...withRequestId, ...RATE_LIMIT_HEADERS } },
        ...errorResponses(['not_found']),
      },
    },
  },
  '/webhooks/{id}/resume': {
    parameters: [parameter('WebhookId')],
    post: {
      operationId: 'resumeWebhook',
      tags: ['Webhooks'],
      summary: 'Resume a failing or disabled subscription (experimental)',
      description: `${WEBHOOK_EXPERIMENTAL} Delivery starts again at once from the event it stopped at, with fresh retries. Harmless on an active one.`,
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      responses: {
        200: { description: 'Active again', headers: { ...withRequestId, ...RATE_LIMIT_HEADERS }, content: json('Webhook') },
        ...errorResponses(['not_found']),
      },
    },
  },
  '/webhooks/{id}/deliveries': {
    parameters: [parameter('WebhookId')],
    get: {
      operationId: 'getWebhookDeliveries',
      tags: ['Webhooks'],
      summary: 'Where delivery stands (experimental)',
      description: `${WEBHOOK_EXPERIMENTAL} The position delivered up to, and for the next event: the failed attempts, the last error and the next try.`,
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      responses: {
        200: { description: 'The delivery state', headers: { ...withRequestId, ...RATE_LIMIT_HEADERS }, content: json('WebhookDeliveries') },
        ...errorResponses(['not_found']),
      },
    },
  },
  '/webhooks/{id}/attempts': {
    parameters: [parameter('WebhookId')],
    get: {
      operationId: 'listWebhookAttempts',
      tags: ['Webhooks'],
      summary: 'The recent attempts (experimental)',
      description:
        `${WEBHOOK_EXPERIMENTAL} Each request made to the URL, newest first: when, its \`webhook-id\`, the positions it carried, the receiver's status ` +
        '(null when it did not answer), how long it took and why it failed. Kept: the newest 100 per subscription, none older than 7 days. ' +
        'When older ones follow, `Link: <…>; rel="next"` (RFC 8288) gives the next page, with the same limit and `before` set.',
      'x-stability': 'experimental',
      parameters: [parameter('Limit'), parameter('WebhookAttemptsBefore'), parameter('XRequestId')],
      responses: {
        200: { description: 'The attempts, newest first', headers: { ...withRequestId, Link: header('NextAttemptsLink'), ...RATE_LIMIT_HEADERS }, content: json('WebhookAttempts') },
        ...errorResponses(['invalid_query', 'not_found']),
      },
    },
  },
  '/webhooks/{id}/replay': {
    parameters: [parameter('WebhookId')],
    post: {
      operationId: 'replayWebhook',
      tags: ['Webhooks'],
      summary: 'Deliver again from a log position (experimental)',
      description:
        `${WEBHOOK_EXPERIMENTAL} Every matching event after \`after\` is delivered again, in order, with the \`webhook-id\` and body it had the first time ` +
        '(a batch is named by its first and last events: one the first delivery grouped otherwise carries another id), then delivery carries on with new events. ' +
        'The subscription becomes active with fresh retries. An `after` past the end of the log is refused with 400 `invalid_body`.',
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      requestBody: { required: true, content: json('WebhookReplay') },
      responses: {
        202: { description: 'Replaying: the subscription', headers: { ...withRequestId, ...RATE_LIMIT_HEADERS }, content: json('Webhook') },
        ...errorResponses([...BODY_CODES, 'not_found']),
      },
    },
  },
  '/webhooks/{id}/rotate-secret': {
    parameters: [parameter('WebhookId')],
    post: {
      operationId: 'rotateWebhookSecret',
      tags: ['Webhooks'],
      summary: 'Replace the signing secret, with an overlap (experimental)',
      description:
        `${WEBHOOK_EXPERIMENTAL} A new secret, shown only in this answer. Until \`previousSecretExpiresAt\` (24 h by default) every delivery is signed ` +
        'with the new and the replaced secret, two `v1,` entries in one `webhook-signature`, so a receiver knowing either verifies it. ' +
        'A second rotation within the overlap drops the oldest secret: only the last replaced one keeps signing.',
      'x-stability': 'experimental',
      parameters: [parameter('XRequestId')],
      responses: {
        200: { description: 'The new secret', headers: { ...withRequestId, ...RATE_LIMIT_HEADERS }, content: json('WebhookSecretRotated') },
        ...errorResponses(['not_found']),
      },
    },
  },
};

const GROUP_EXPERIMENTAL =
  'Experimental: not part of interface 1.0.0. A consumer group belongs to the API key that made it, its name within that key: another key is told 404.';

/** The experimental operations of one tag, each told by its summary, description, success answer, error codes and what else it has (a body). */
function experimentalOperations(tag: string, preface: string) {
  return (operationId: string, summary: string, description: string, success: Json, codes: readonly ErrorCode[], extra: Json = {}): Json => ({
    operationId,
    tags: [tag],
    summary: `${summary} (experimental)`,
    description: `${preface} ${description}`,
    'x-stability': 'experimental',
    parameters: [parameter('XRequestId')],
    ...extra,
    responses: { ...success, ...errorResponses(codes) },
  });
}

const groupOperation = experimentalOperations('Consumer groups', GROUP_EXPERIMENTAL);
const answer = (description: string, schemaName?: string, headers: Json = {}) => ({
  description, headers: { ...withRequestId, ...headers, ...RATE_LIMIT_HEADERS }, ...(schemaName ? { content: json(schemaName) } : {}),
});
const body = (schemaName: string) => ({ requestBody: { required: true, content: json(schemaName) } });

/** Consumer groups (`/consumer-groups`): competing consumers of the log, each operation experimental. */
const CONSUMER_GROUP_PATHS: Json = {
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
        'When nothing can go now, waits up to `waitMs` for new commits, then answers `{"claims": []}`. Past the in-flight cap of the group (1000) or ' +
        'of the consumer (200): 429 `too_many_in_flight` with `Retry-After` (when the soonest lease expires), never an empty answer. ' +
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

const STORE_EXPERIMENTAL = 'Experimental: not part of interface 1.0.0. Every key sees the store\'s orders, as it sees its pets.';

const storeOperation = experimentalOperations('Store', STORE_EXPERIMENTAL);
const writtenOrder = (description: string, headers: Json = {}) => answer(description, 'Order', { ETag: header('OrderETag'), 'Petstore-Position': header('Position'), ...headers });

/** The store (`/store`): orders that reserve their pet, and the inventory, each operation experimental. */
const STORE_PATHS: Json = {
  '/store/orders': {
    post: storeOperation(
      'placeOrder', 'Place an order for an animal',
      'The animal must be `available`: it becomes `pending`, held by the order, in the same commit. An animal that is pending, sold or without a status is 409 ' +
        '`pet_not_available`; a `petId` that names no animal is 422 `unknown_pet`. Unknown fields are refused.',
      { 201: writtenOrder('Placed (the same answer again for a repeated Idempotency-Key and body)', { Location: header('OrderLocation') }) },
      [...BODY_CODES, 'idempotency_key_reused', 'pet_not_available', 'unknown_pet'],
      { parameters: [parameter('IdempotencyKey'), parameter('XRequestId')], ...body('NewOrder') },
    ),
    get: storeOperation(
      'listOrders', 'List store orders',
      'A page of orders in ascending id order, optionally of one status or one animal; `Link: <…>; rel="next"` (RFC 8288) when more follow.',
      { 200: answer('A page of orders', 'Orders', { Link: header('NextOrdersLink') }) }, ['invalid_query'],
      { parameters: [parameter('Limit'), parameter('OrderStatus'), parameter('OrderPetId'), parameter('OrderAfter'), parameter('MinPosition'), parameter('XRequestId')] },
    ),
  },
  '/store/orders/{orderId}': {
    parameters: [parameter('OrderId')],
    get: storeOperation(
      'getOrder', 'Get a store order', 'The order with its version as `ETag`.',
      { 200: answer('The order', 'Order', { ETag: header('OrderETag') }) }, ['invalid_path', 'not_found'],
      { parameters: [parameter('MinPosition'), parameter('XRequestId')] },
    ),
    patch: storeOperation(
      'updateOrder', 'Approve or deliver an order',
      'placed → approved → delivered; delivering sells the animal in the same commit. Moving to the status it has changes nothing; any other move is 409 ' +
        '`illegal_transition`. With `If-Match` the move applies only while the order is at that version.',
      { 200: writtenOrder('The order after the move') }, ['invalid_path', ...BODY_CODES, 'not_found', 'illegal_transition', 'version_mismatch'],
      {
        parameters: [parameter('IfMatch'), parameter('XRequestId')],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: schemaRef('OrderPatch') } }, 'application/merge-patch+json': { schema: { $ref: schemaRef('OrderPatch') } } },
        },
      },
    ),
    delete: storeOperation(
      'cancelOrder', 'Cancel an order',
      'A placed or approved order is cancelled (it stays readable as `cancelled`) and its animal is `available` again in the same commit; cancelling again is 204 too; ' +
        'a delivered order is 409 `illegal_transition`.',
      { 204: answer('Cancelled', undefined, { 'Petstore-Position': header('Position') }) }, ['invalid_path', 'not_found', 'illegal_transition', 'version_mismatch'],
      { parameters: [parameter('IfMatch'), parameter('XRequestId')] },
    ),
  },
  '/store/inventory': {
    get: storeOperation(
      'getInventory', 'Count the animals by status', 'Exact: the read model at the time of the answer (at least `Petstore-Min-Position` when sent). An animal without a status is in no count.',
      { 200: answer('The counts', 'Inventory') }, [], { parameters: [parameter('MinPosition'), parameter('XRequestId')] },
    ),
  },
};

/** What the service sends to a subscribed URL (OpenAPI 3.1 `webhooks`). */
const WEBHOOK_CALLBACKS: Json = {
  petEvent: {
    post: {
      operationId: 'petEvent',
      tags: ['Webhooks'],
      summary: 'One event of the log, POSTed to a subscribed URL (experimental)',
      description:
        'Experimental. One CloudEvent in the feed\'s form, `Content-Type: application/cloudevents+json` (with `batchSize` above 1: ' +
        'a JSON array of up to that many, `application/cloudevents-batch+json`), signed per Standard Webhooks: ' +
        '`webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed with the base64-decoded part of the secret after `whsec_`. ' +
        'Verify with any Standard Webhooks library. Every attempt at the same event carries the same `webhook-id` and body: use it to drop duplicates. ' +
        'Events arrive one at a time, in log order. Answer 2xx within 10 s to acknowledge.',
      'x-stability': 'experimental',
      security: [],
      parameters: [
        {
          name: 'webhook-id',
          in: 'header',
          required: true,
          description:
            'The same for every attempt at one event, and again on a replay: `msg_{subscription}_{position}`; for a batch, `msg_{subscription}_{first position}_{last position}`.',
          schema: { type: 'string' },
        },
        { name: 'webhook-timestamp', in: 'header', required: true, description: 'Seconds since the epoch when this attempt was signed.', schema: { type: 'string', pattern: DECIMAL_INTEGER_PATTERN } },
        {
          name: 'webhook-signature',
          in: 'header',
          required: true,
          description: '`v1,` and the base64 signature; after a secret rotation, for the overlap, two such entries separated by a space (one per secret).',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/cloudevents+json': { schema: { $ref: schemaRef('CloudEvent') } },
          'application/cloudevents-batch+json': { schema: { $ref: schemaRef('CloudEvents') } },
        },
      },
      responses: {
        '2XX': { description: 'Received: the next event follows' },
        410: { description: 'Gone: the subscription is disabled, no more attempts until it is resumed' },
        429: { description: 'Too many: retried later, not before `Retry-After` (seconds or an HTTP date) when given' },
        503: { description: 'Unavailable: retried later, not before `Retry-After` (seconds or an HTTP date) when given' },
        default: { description: 'Anything else, or no answer in time: retried later' },
      },
    },
  },
};

/** The whole document, from the schemas that validate requests and the table of error codes. */
export function buildOpenApiDocument(servers: readonly OpenApiServer[]): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Pet Store',
      version: INTERFACE_VERSION,
      summary: 'A catalogue of the animals in a store.',
      description:
        'List the animals in a store, add one, look one up. Every pet operation needs an API key as a bearer credential. ' +
        'Errors are `{code, message, status}`. Operations marked `x-stability: experimental` are outside interface 1.0.0 and may change or go away.',
      contact: { name: 'Pet Store maintainers' },
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers,
    tags: [{ name: 'Pets', description: 'The animals in the store' }, { name: 'Events', description: 'The log of every change, as CloudEvents (experimental)' },
      { name: 'Webhooks', description: 'The log of every change, POSTed to your URL (experimental)' },
      { name: 'Consumer groups', description: 'The log shared by competing consumers, each event acked by one (experimental)' },
      { name: 'Store', description: 'Store orders, each holding the animal it orders, and the inventory (experimental)', 'x-stability': 'experimental' },
    ],
    security: [{ bearerAuth: [] }],
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          tags: ['Pets'],
          summary: 'List animals',
          description:
            'A page of animals in ascending id order, optionally filtered by status. The body is a plain array. ' +
            'When more follow, `Link: <…>; rel="next"` (RFC 8288) gives the next page, with the same filter and limit and `after` set.',
          parameters: [parameter('Limit'), parameter('Status'), parameter('After'), parameter('MinPosition'), parameter('XRequestId')],
          responses: {
            200: {
              description: 'A page of animals',
              headers: { 'X-Request-Id': header('XRequestId'), Link: header('NextLink'), ...RATE_LIMIT_HEADERS },
              content: json('Pets'),
            },
            ...errorResponses(['invalid_query']),
          },
        },
        post: {
          operationId: 'createPet',
          tags: ['Pets'],
          summary: 'Add an animal',
          description: 'The service assigns the id. Unknown fields, and `id`, are refused.',
          parameters: [parameter('IdempotencyKey'), parameter('XRequestId')],
          requestBody: { required: true, content: json('NewPet') },
          responses: {
            201: {
              description: 'Added: the animal with its id (the same answer again for a repeated Idempotency-Key and body)',
              headers: { 'X-Request-Id': header('XRequestId'), Location: header('Location'), 'Petstore-Position': header('Position'), ...RATE_LIMIT_HEADERS },
              content: json('Pet'),
            },
            ...errorResponses([...BODY_CODES, 'idempotency_key_reused']),
          },
        },
      },
      '/pets/{petId}': {
        parameters: [parameter('PetId')],
        get: {
          operationId: 'getPet',
          tags: ['Pets'],
          summary: 'Get an animal',
          description: `Deprecated: removed on ${GET_PET_SUNSET}. Use \`GET /pets\` with the \`status\` filter instead. Every answer carries Deprecation, Sunset and Link headers.`,
          deprecated: true,
          parameters: [parameter('MinPosition'), parameter('XRequestId')],
          responses: {
            200: {
              description: 'The animal',
              headers: { 'X-Request-Id': header('XRequestId'), ETag: header('ETag'), ...DEPRECATION_HEADERS, ...RATE_LIMIT_HEADERS },
              content: json('Pet'),
            },
            ...errorResponses(['invalid_path', 'not_found'], DEPRECATION_HEADERS),
          },
        },
        patch: {
          operationId: 'changePetStatus',
          tags: ['Pets'],
          summary: "Change an animal's status (experimental)",
          description:
            'Experimental: not part of interface 1.0.0. Changes the status by the status rules (`sold` is final). ' +
            'With `If-Match` the change applies only while the pet is at that version.',
          'x-stability': 'experimental',
          parameters: [parameter('IfMatch'), parameter('XRequestId')],
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { $ref: schemaRef('StatusPatch') } },
              'application/merge-patch+json': { schema: { $ref: schemaRef('StatusPatch') } },
            },
          },
          responses: {
            200: {
              description: 'The animal after the change (unchanged when it already had that status)',
              headers: { 'X-Request-Id': header('XRequestId'), ETag: header('ETag'), 'Petstore-Position': header('Position'), ...RATE_LIMIT_HEADERS },
              content: json('Pet'),
            },
            ...errorResponses(['invalid_path', ...BODY_CODES, 'not_found', 'illegal_transition', 'version_mismatch', 'pet_reserved']),
          },
        },
      },
      '/events': {
        get: {
          operationId: 'listEvents',
          tags: ['Events'],
          summary: 'Read the log of changes (experimental)',
          description:
            'Experimental: not part of interface 1.0.0. Every change in position order, each a CloudEvents 1.0 event in structured JSON ' +
            '(`id` is the position). As JSON (the default): a plain array (`application/json`, not the batch media type), ' +
            '`Link: <…>; rel="next"` while more exist. With `Accept: text/event-stream`: Server-Sent Events, one message per event ' +
            '(`id:` the position, no `event:` field, `data:` the event), first the log from `after` (or `Last-Event-ID`) on, then each new commit; ' +
            '`retry:` once at the start, a `:` comment line after 15 s of silence. `limit` sets the JSON page only. ' +
            `Type names: ${Object.values(CLOUD_EVENT_TYPES).join(', ')}.`,
          'x-stability': 'experimental',
          parameters: [parameter('EventAfter'), parameter('EventLimit'), parameter('EventType'), parameter('EventPetId'), parameter('LastEventId'), parameter('XRequestId')],
          responses: {
            200: {
              description: 'A page of the log, or the stream',
              headers: { 'X-Request-Id': header('XRequestId'), Link: header('NextEventsLink') },
              content: {
                'application/json': { schema: { $ref: schemaRef('CloudEvents') } },
                'text/event-stream': {
                  schema: { type: 'string', description: 'Server-Sent Events; each `data:` line is one CloudEvent as JSON (the `CloudEvent` schema).' },
                  example: eventStreamExample(RECONNECT_MS),
                  // OpenAPI 3.2's itemSchema, as an extension until the document moves to 3.2.
                  'x-itemSchema': { $ref: schemaRef('CloudEvent') },
                },
              },
            },
            ...errorResponses(['invalid_query']),
          },
        },
      },
      '/pets/{petId}/events': {
        parameters: [parameter('PetId')],
        get: {
          operationId: 'listPetEvents',
          tags: ['Events'],
          summary: "An animal's history (experimental)",
          description: 'Experimental: not part of interface 1.0.0. Every event of one animal, oldest first, in the same form as `GET /events`.',
          'x-stability': 'experimental',
          parameters: [parameter('XRequestId')],
          responses: {
            200: { description: 'The history', headers: { 'X-Request-Id': header('XRequestId') }, content: json('CloudEvents') },
            ...errorResponses(['invalid_path', 'not_found']),
          },
        },
      },
      ...WEBHOOK_PATHS,
      ...CONSUMER_GROUP_PATHS,
      ...STORE_PATHS,
    },
    webhooks: WEBHOOK_CALLBACKS,
    components: {
      schemas: Object.fromEntries(Object.entries(COMPONENT_SCHEMAS).map(([name, schema]) => [name, documentSchema(schema)])),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <API_KEY>`.' },
      },
      parameters: {
        PetId: { name: 'petId', in: 'path', required: true, schema: documentSchema(PetIdSchema) },
        OrderId: { name: 'orderId', in: 'path', required: true, schema: documentSchema(OrderIdParameterSchema) },
        OrderStatus: { name: 'status', in: 'query', required: false, description: 'Only orders with this status.', schema: { $ref: schemaRef('OrderStatus') } },
        OrderPetId: { name: 'petId', in: 'query', required: false, description: 'Only the orders of this animal.', schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' } },
        OrderAfter: {
          name: 'after', in: 'query', required: false, description: 'Continue after the order with this id (exclusive), in id order: plain decimal digits.',
          schema: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' },
        },
        Limit: { name: 'limit', in: 'query', required: false, schema: documentSchema(LimitSchema) },
        Status: { name: 'status', in: 'query', required: false, description: 'Only animals with this status.', schema: { $ref: schemaRef('PetStatus') } },
        After: { name: 'after', in: 'query', required: false, schema: documentSchema(AfterSchema) },
        EventAfter: { name: 'after', in: 'query', required: false, schema: documentSchema(EventAfterSchema) },
        EventLimit: { name: 'limit', in: 'query', required: false, schema: documentSchema(EventLimitSchema) },
        EventType: {
          name: 'type',
          in: 'query',
          required: false,
          description: 'Only events of these CloudEvents types: repeat the parameter or give a comma list.',
          style: 'form',
          explode: true,
          schema: { type: 'array', items: { type: 'string', enum: Object.values(CLOUD_EVENT_TYPES) } },
        },
        EventPetId: { name: 'petId', in: 'query', required: false, description: "Only this animal's events.", schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' } },
        LastEventId: {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'A stream resumes after this position (what EventSource sends when it reconnects); it takes precedence over `after`. A JSON page checks it (400 when it is not plain digits) and pages by `after` alone.',
          schema: { type: 'string', pattern: DECIMAL_INTEGER_PATTERN },
        },
        IfMatch: {
          name: 'If-Match',
          in: 'header',
          required: false,
          description: 'Apply only at this version: `*`, or entity tags such as `"3"` as `ETag` gave them (weak tags match nothing). 412 when none matches; 400 when it is neither.',
          schema: { type: 'string', pattern: IF_MATCH_PATTERN },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Experimental. The same key and body from the same API key within 24 hours replay the first 201 and create nothing; ' +
            'the same key with another body is 422 `idempotency_key_reused`.',
          'x-stability': 'experimental',
          schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
        },
        WebhookId: { name: 'id', in: 'path', required: true, description: 'The subscription.', schema: { type: 'string', pattern: '^wh_[A-Za-z0-9_-]+$' } },
        WebhookAttemptsBefore: { name: 'before', in: 'query', required: false, schema: documentSchema(WebhookAttemptsBeforeSchema) },
        GroupName: { name: 'group', in: 'path', required: true, description: 'The consumer group: 1 to 64 of a-z, 0-9 and -.', schema: { type: 'string', pattern: GROUP_NAME_PATTERN } },
        ParkedAfter: {
          name: 'after', in: 'query', required: false, description: 'Only parked events after this log position: what `Link: rel="next"` sets. Plain decimal digits.',
          schema: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' },
        },
        MinPosition: {
          name: 'Petstore-Min-Position',
          in: 'header',
          required: false,
          description:
            'Answer from a state that includes at least this log position: the highest `Petstore-Position` you saw, so that a read ' +
            'through any instance sees every write you saw acknowledged. An instance that has not seen it yet checks the database; ' +
            'when the log has not reached it within a second, 503 `unavailable` with `Retry-After`; a position past every committed one is 400 `invalid_header`, naming the end.',
          schema: { type: 'string', pattern: DECIMAL_INTEGER_PATTERN },
        },
        XRequestId: {
          name: 'X-Request-Id',
          in: 'header',
          required: false,
          description: 'Your id for this request (1 to 128 visible ASCII characters); echoed, and written in the log. Otherwise the service makes one.',
          schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
        },
      },
      headers: {
        XRequestId: { description: 'The id of this request, as sent or as made by the service.', required: true, schema: { type: 'string' } },
        WebhookLocation: { description: 'The absolute address of the new subscription.', required: true, schema: { type: 'string', format: 'uri' } },
        Location: { description: 'The absolute address of the new animal.', required: true, schema: { type: 'string', format: 'uri' } },
        Position: {
          description:
            'The log position of the commit that holds this answer (for a replayed creation, the creation; for a change to the current status, the last change). ' +
            'Send the highest one you saw as `Petstore-Min-Position` on reads.',
          required: true,
          schema: { type: 'string', pattern: POSITIVE_INTEGER_PATTERN },
        },
        ETag: { description: 'The version of the animal as a strong entity tag, e.g. `"3"`; send it back in If-Match.', required: true, schema: { type: 'string' } },
        OrderETag: { description: 'The version of the order as a strong entity tag, e.g. `"2"`; send it back in If-Match.', required: true, schema: { type: 'string' } },
        OrderLocation: { description: 'The absolute address of the new order.', required: true, schema: { type: 'string', format: 'uri' } },
        NextOrdersLink: {
          description: 'Present when more orders follow: `<{base}/store/orders?limit=…&status=…&petId=…&after=…>; rel="next"` (RFC 8288).',
          schema: { type: 'string' },
        },
        NextLink: {
          description: 'Present when more animals follow: `<{base}/pets?limit=…&status=…&after=…>; rel="next"` (RFC 8288).',
          schema: { type: 'string' },
        },
        NextAttemptsLink: {
          description: 'Present when older attempts follow: `<{base}/webhooks/{id}/attempts?limit=…&before=…>; rel="next"` (RFC 8288).',
          schema: { type: 'string' },
        },
        NextParkedLink: {
          description: 'Present when more parked events follow: `<{base}/consumer-groups/{group}/parked?limit=…&after=…>; rel="next"` (RFC 8288).',
          schema: { type: 'string' },
        },
        NextEventsLink: {
          description: 'Present when more events exist now: `<{base}/events?after=…&limit=…>; rel="next"` with the same filters (RFC 8288).',
          schema: { type: 'string' },
        },
        Deprecation: { description: 'RFC 9745: deprecated since 2026-11-21.', required: true, schema: { type: 'string', const: GET_PET_DEPRECATION } },
        Sunset: { description: 'RFC 8594: the day this operation goes away.', required: true, schema: { type: 'string', const: GET_PET_SUNSET } },
        SuccessorLink: { description: 'The operation to use instead: `<{base}/pets>; rel="successor-version"`.', required: true, schema: { type: 'string' } },
        WWWAuthenticate: { description: '`Bearer`, or `Bearer error="invalid_token"` when a key was sent but is not valid (RFC 6750).', required: true, schema: { type: 'string' } },
        RetryAfter: { description: 'Whole seconds to wait before trying again.', schema: { type: 'string', pattern: DECIMAL_INTEGER_PATTERN } },
        RateLimitPolicy: {
          description:
            'When rate limiting is on (`PETSTORE_RATE_LIMIT`): the per-key quota as a structured field of draft-ietf-httpapi-ratelimit-headers-11, ' +
            '`"per-key";q=<burst>;w=<seconds to refill it>`.',
          schema: { type: 'string', pattern: '^"per-key";q=[0-9]+;w=[0-9]+$' },
        },
        RateLimit: {
          description: 'When rate limiting is on: what is left of the quota now, `"per-key";r=<requests left>;t=<seconds until the next>`.',
          schema: { type: 'string', pattern: '^"per-key";r=[0-9]+;t=[0-9]+$' },
        },
      },
    },
  };
}
