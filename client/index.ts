export { createPetStoreClient } from './create-pet-store-client.ts';
export type {
  CallOptions, ChangePetStatusOptions, CreatePetOptions, EventsQuery, ListPetsQuery, PetStoreClient, PetStoreClientOptions, VersionedPet, WebhookAttemptsQuery,
} from './create-pet-store-client.ts';
export type { ClaimOptions, ConsumeOptions, ConsumerGroupCalls, NackOptions } from './consumer-groups.ts';
export type { ListOrdersQuery, MoveOrderOptions, OrderCallOptions, PlaceOrderOptions, StoreOrderCalls, VersionedOrder } from './store-orders.ts';
export type { DeprecationNotice } from './deprecation-notice.ts';
export { PetStoreAbortError, PetStoreError, PetStoreNetworkError, PetStoreTimeoutError } from './errors.ts';
export { DEFAULT_RETRY_POLICY } from './retry.ts';
export type { RetryPolicy } from './retry.ts';
export type {
  Acked, Claim, CloudEvent, CloudEventType, ConsumerGroup, Extended, Inventory, Nacked, NewConsumerGroup, NewOrder, NewPet, Order, OrderStatus, Pet, PetStatus, PetStoreErrorCode,
  Webhook, WebhookAttempt, WebhookSecretRotated,
} from './types.ts';
