import { DECIMAL_INTEGER_PATTERN } from '../decimal-integer.ts';
import { schemaRef, json, header, parameter, BODY_CODES, errorResponses, RATE_LIMIT_HEADERS, withRequestId, answer, body } from './parts.ts';
import type { Json } from './parts.ts';

const WEBHOOK_EXPERIMENTAL =
  'Experimental: not part of interface 1.0.0. A subscription belongs to the API key that made it: another key is told 404.';

/** The subscription resource (`/webhooks`), each operation experimental. */
export const WEBHOOK_PATHS: Json = {
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

/** What the service sends to a subscribed URL (OpenAPI 3.1 `webhooks`). */
export const WEBHOOK_CALLBACKS: Json = {
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
