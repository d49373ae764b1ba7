import { Type } from '@sinclair/typebox';
import { CLOUD_EVENT_TYPES } from './event-feed.ts';

const CloudEventTypeName = Type.Union(Object.values(CLOUD_EVENT_TYPES).map((name) => Type.Literal(name)));
const PetIdFilter = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, format: 'int64', description: "Only this pet's events." });
const URL_DESCRIPTION = 'Where each event is POSTed: http or https, reaching a public address (loopback, private and link-local addresses are refused).';
/** The longest webhook URL taken, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
const NewWebhookUrl = Type.String({ format: 'uri', minLength: 1, maxLength: MAX_WEBHOOK_URL_LENGTH, description: URL_DESCRIPTION });
const WebhookUrl = Type.String({ format: 'uri', description: URL_DESCRIPTION });
const Types = Type.Array(CloudEventTypeName, {
  uniqueItems: true,
  description: 'Only events of these CloudEvents types (the feed\'s `type` names); absent: every type.',
});

export const MAX_WEBHOOK_BATCH = 100;
/** Each subscription's attempt log keeps its newest this many attempts, none older than WEBHOOK_ATTEMPTS_KEPT_MS. */
export const WEBHOOK_ATTEMPTS_KEPT = 100;
export const WEBHOOK_ATTEMPTS_KEPT_MS = 7 * 24 * 3_600_000;
const BatchSize = Type.Integer({
  minimum: 1,
  maximum: MAX_WEBHOOK_BATCH,
  default: 1,
  description:
    'Events per request at most. 1 (the default): each event alone, the body one CloudEvent (`application/cloudevents+json`). ' +
    'More: each request carries the events there are, up to this many, as a JSON array (`application/cloudevents-batch+json`), the same array on every attempt.',
});

export const MAX_WEBHOOK_RATE = 1000;
const MaxPerSecond = Type.Integer({
  minimum: 1,
  maximum: MAX_WEBHOOK_RATE,
  description: 'Requests a second at most to this receiver (a batch is one request); absent: each as soon as the last was answered.',
});

export const NewWebhookSchema = Type.Object(
  { url: NewWebhookUrl, types: Type.Optional(Types), petId: Type.Optional(PetIdFilter), batchSize: Type.Optional(BatchSize), maxPerSecond: Type.Optional(MaxPerSecond) },
  { $id: 'NewWebhook', additionalProperties: false },
);
// The service checks the URL itself (http or https, its host's addresses) and says what is wrong in
// words, so the schema it checks a body against leaves out the `format` the document shows.
const { format: _checkedByTheService, ...urlAsCompiled } = NewWebhookUrl;
export const NewWebhookCheckedSchema = Type.Object({ ...NewWebhookSchema.properties, url: Type.String(urlAsCompiled) }, { additionalProperties: false });

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** A subscription as its owner reads it: never its secret. */
export const WebhookSchema = Type.Object(
  {
    id: Type.String({ description: 'The subscription, also part of each `webhook-id`.' }),
    url: WebhookUrl,
    types: Type.Optional(Types),
    petId: Type.Optional(PetIdFilter),
    batchSize: BatchSize,
    maxPerSecond: Type.Optional(MaxPerSecond),
    createdAt: Timestamp,
    status: Type.Union([Type.Literal('active'), Type.Literal('failing'), Type.Literal('disabled')], {
      description:
        '`active`: delivering. `failing`: the retries of one event ran out. `disabled`: the receiver answered `410 Gone`. ' +
        'Both wait for `POST /webhooks/{id}/resume`, which starts again at the event they stopped at.',
    }),
  },
  { $id: 'Webhook', additionalProperties: false },
);

export const WebhookCreatedSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description: 'The signing secret in the Standard Webhooks form (`whsec_` + base64). Shown only in this answer.',
    }),
  },
  { $id: 'WebhookCreated', additionalProperties: false },
);

export const WebhooksSchema = Type.Array(WebhookSchema, { $id: 'Webhooks' });

/** One request to the subscription's URL, as the attempt log keeps it. */
export const WebhookAttemptSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, format: 'int64', description: 'Orders the log (a later attempt has a larger id); `before` in the next page\'s address.' }),
    attemptedAt: Timestamp,
    messageId: Type.String({ description: 'The `webhook-id` the request carried.' }),
    positions: Type.Array(Type.Integer({ minimum: 1, format: 'int64' }), { minItems: 1, description: 'The log positions of the events it carried, in order.' }),
    responseStatus: Type.Union([Type.Integer({ minimum: 100, maximum: 599 }), Type.Null()], { description: "The receiver's HTTP status; null when it did not answer (refused, timed out, closed)." }),
    durationMs: Type.Integer({ minimum: 0, description: 'From sending to the end of the answer (or the failure).' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it did not count as delivered; null after a 2xx.' }),
  },
  { $id: 'WebhookAttempt', additionalProperties: false },
);

export const WebhookAttemptsSchema = Type.Array(WebhookAttemptSchema, {
  $id: 'WebhookAttempts',
  description: `The newest attempts first. Each subscription keeps its newest ${WEBHOOK_ATTEMPTS_KEPT}, none older than ${WEBHOOK_ATTEMPTS_KEPT_MS / 86_400_000} days.`,
});

export const WebhookAttemptsBeforeSchema = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  format: 'int64',
  description: 'Only attempts older than the one with this id: what `Link: rel="next"` sets. Plain decimal digits.',
});

export const WebhookReplaySchema = Type.Object(
  {
    after: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      format: 'int64',
      description: "Every matching event after this log position is delivered again, in order; at most the log's end (0: from the start).",
    }),
  },
  { $id: 'WebhookReplay', additionalProperties: false },
);

export const WebhookSecretRotatedSchema = Type.Object(
  {
    secret: WebhookCreatedSchema.properties.secret,
    previousSecretExpiresAt: Type.String({
      format: 'date-time',
      description: 'Until then every delivery is signed with both secrets (two `v1,` entries in `webhook-signature`), so a receiver knowing either verifies it.',
    }),
  },
  { $id: 'WebhookSecretRotated', additionalProperties: false },
);

/** Where delivery of one subscription stands. */
export const WebhookDeliveriesSchema = Type.Object(
  {
    status: WebhookSchema.properties.status,
    position: Type.Integer({ minimum: 0, format: 'int64', description: 'Delivered up to this log position: the receiver acknowledged every matching event up to it.' }),
    attempts: Type.Integer({ minimum: 0, description: 'Failed attempts at the next event so far (0: none failed).' }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed: the status and the start of the answer, a timeout, or a refused connection.' }),
    nextTryAt: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is due, while retrying.' }),
    failingSince: Type.Union([Timestamp, Type.Null()], { description: 'The first failed attempt at the next event; the retries stop a bounded time after it.' }),
    lastDeliveredAt: NullableTimestamp,
  },
  { $id: 'WebhookDeliveries', additionalProperties: false },
);
