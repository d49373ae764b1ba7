import type { Static } from '@sinclair/typebox';
import type { ErrorSchema, NewPetSchema, PetSchema, PetStatusSchema } from '../contract/schemas.ts';
import type { CloudEventSchema } from '../contract/event-feed.ts';
import type { WebhookAttemptSchema, WebhookSchema, WebhookSecretRotatedSchema } from '../contract/webhooks.ts';
import type { AckedSchema, ClaimsSchema, ConsumerGroupSchema, ExtendedSchema, NackedSchema, NewConsumerGroupSchema } from '../contract/consumer-groups.ts';
import type { InventorySchema, NewOrderSchema, OrderSchema, OrderStatusSchema } from '../contract/orders.ts';

// Type-only imports: the server's schemas shape these types and are erased at run time,
// so the client loads no TypeBox and no server code.

/** A pet as the service answers it. */
export type Pet = Static<typeof PetSchema>;

/** What `createPet` sends. */
export type NewPet = Static<typeof NewPetSchema>;

export type PetStatus = Static<typeof PetStatusSchema>;

/**
 * The `code` of a `PetStoreError`: one of the service's error codes, or `unexpected_response` when
 * the answer was not the service's JSON (a proxy's HTML page, a cut-off body, a missing header).
 */
export type PetStoreErrorCode = Static<typeof ErrorSchema>['code'] | 'unexpected_response';

/** One event of the log (experimental), in CloudEvents 1.0 structured JSON: `id` is its position. */
export type CloudEvent = Static<typeof CloudEventSchema>;

/** The CloudEvents `type` names the feed filters on. */
export type CloudEventType = CloudEvent['type'];

/** A webhook subscription as its owner reads it (experimental). */
export type Webhook = Static<typeof WebhookSchema>;

/** One request made to a subscription's URL, from its attempt log (experimental). */
export type WebhookAttempt = Static<typeof WebhookAttemptSchema>;

/** A rotated signing secret, shown once, and until when the replaced one still signs (experimental). */
export type WebhookSecretRotated = Static<typeof WebhookSecretRotatedSchema>;

/** A consumer group and where it stands (experimental). */
export type ConsumerGroup = Static<typeof ConsumerGroupSchema>;

/** What `createConsumerGroup` sends: the group's settings. */
export type NewConsumerGroup = Static<typeof NewConsumerGroupSchema>;

/** An event handed to one consumer under a lease (experimental). */
export type Claim = Static<typeof ClaimsSchema>['claims'][number];

export type Acked = Static<typeof AckedSchema>;
export type Nacked = Static<typeof NackedSchema>;
export type Extended = Static<typeof ExtendedSchema>;

/** A store order as the service answers it (experimental). */
export type Order = Static<typeof OrderSchema>;
export type NewOrder = Static<typeof NewOrderSchema>;
export type OrderStatus = Static<typeof OrderStatusSchema>;
/** The pets by status (experimental). */
export type Inventory = Static<typeof InventorySchema>;
