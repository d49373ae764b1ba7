import type { TSchema } from '@sinclair/typebox';
import { DECIMAL_INTEGER_PATTERN, POSITIVE_INTEGER_PATTERN } from './decimal-integer.ts';
import { IF_MATCH_PATTERN } from './entity-tags.ts';
import { GET_PET_DEPRECATION, GET_PET_SUNSET } from './deprecations.ts';
import { AfterSchema, ErrorSchema, LimitSchema, NewPetSchema, PetIdSchema, PetSchema, PetStatusSchema, PetsSchema, StatusPatchSchema } from './schemas.ts';
import { CLOUD_EVENT_TYPES, CloudEventSchema, CloudEventsSchema, EventAfterSchema, EventLimitSchema, RECONNECT_MS, eventStreamExample } from './event-feed.ts';
import { NewWebhookSchema, WebhookAttemptSchema, WebhookAttemptsBeforeSchema, WebhookAttemptsSchema, WebhookCreatedSchema, WebhookDeliveriesSchema, WebhookReplaySchema, WebhookSchema, WebhookSecretRotatedSchema, WebhooksSchema } from './webhooks.ts';
import { CONSUMER_GROUP_COMPONENTS, GROUP_NAME_PATTERN } from './consumer-groups.ts';
import { InventorySchema, NewOrderSchema, OrderIdParameterSchema, OrderPatchSchema, OrderSchema, OrderStatusSchema, OrdersSchema } from './orders.ts';
import { schemaRef, json, header, parameter, BODY_CODES, errorResponses, RATE_LIMIT_HEADERS, DEPRECATION_HEADERS, answer, body } from './openapi/parts.ts';
import type { Json } from './openapi/parts.ts';
import { WEBHOOK_CALLBACKS, WEBHOOK_PATHS } from './openapi/webhook-paths.ts';
import { CONSUMER_GROUP_PATHS } from './openapi/consumer-group-paths.ts';
import { STORE_PATHS } from './openapi/store-paths.ts';

/** The interface version the document describes (not the package's). */
export const INTERFACE_VERSION = '1.0.0';

export interface OpenApiServer {
  readonly url: string;
  readonly description: string;
}

/** An OpenAPI 3.1 document: plain JSON. */
export type OpenApiDocument = { readonly openapi: '3.1.0' } & Record<string, unknown>;


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
