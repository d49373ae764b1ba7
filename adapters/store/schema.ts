import type { Generated } from 'kysely';

export interface EventsTable {
  position: Generated<number>;
  stream_id: string;
  stream_version: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

export interface PetsTable {
  id: number;
  name: string;
  category_id: number;
  status: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

/** SQLite only: PostgreSQL takes pet ids from the sequence `pet_ids`. */
export interface SequencesTable {
  name: string;
  value: number;
}

export interface ApiKeysTable {
  id: Generated<number>;
  key_hash: string;
  label: string;
  created_at: string;
  revoked_at: string | null;
}

export interface IdempotencyKeysTable {
  scope: string;
  idempotency_key: string;
  fingerprint: string;
  /** The created pet's JSON, answered again on a replay. */
  pet: string;
  expires_at: string;
}

/** One row, rewritten by the readiness probe's write check. */
export interface StoreHealthTable {
  id: number;
  checked_at: string;
}

/** A webhook subscription and its delivery state (see `WebhookSubscriptions`). */
export interface WebhooksTable {
  id: string;
  owner_key_id: string;
  url: string;
  /** JSON array of event types; null: every type. */
  types: string | null;
  pet_id: number | null;
  secret: string;
  created_at: string;
  status: string;
  position: number;
  attempts: number;
  last_error: string | null;
  next_try_at: string | null;
  failing_since: string | null;
  last_delivered_at: string | null;
  lease_holder: string | null;
  lease_expires_at: string | null;
  batch_size: number;
  batch_until: number | null;
}

export interface PetStoreDatabase {
  events: EventsTable;
  pets: PetsTable;
  sequences: SequencesTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  store_health: StoreHealthTable;
  webhooks: WebhooksTable;
}
