import { PostgresAdapter } from 'kysely';
import type { Generated, Kysely } from 'kysely';
import { upcast } from '../../application/index.ts';
import type { EventMetadata, StoredEvent } from '../../application/index.ts';

/**
 * Every table of the store, declared once: its columns in order, their types, the primary key and the
 * indexes. Column lists, insert statements and row types of both dialects are derived from here;
 * migrations are the history that builds these tables, and a test proves migrating an empty database
 * gives exactly what is declared. A column added by a migration goes at the end of its table.
 */

/** `id`: a 64-bit integer (SQLite's INTEGER; PostgreSQL's bigint); `integer`: 32 bits on PostgreSQL. */
export type ColumnType = 'id' | 'integer' | 'text';

export interface ColumnDeclaration {
  readonly type: ColumnType;
  readonly nullable?: true;
  /** The database numbers new rows (SQLite AUTOINCREMENT; a PostgreSQL identity). */
  readonly generated?: 'always' | 'by default';
  readonly default?: number;
}

export interface TableDeclaration {
  readonly name: string;
  readonly columns: Readonly<Record<string, ColumnDeclaration>>;
  readonly primaryKey: readonly string[];
  /** Index name → its columns. */
  readonly indexes?: Readonly<Record<string, readonly string[]>>;
  /** Unique constraint name → its columns. */
  readonly unique?: Readonly<Record<string, readonly string[]>>;
  /** A table only this dialect has. */
  readonly only?: 'sqlite';
}

const text = { type: 'text' } as const;
const nullableText = { type: 'text', nullable: true } as const;
const id = { type: 'id' } as const;
const integer = { type: 'integer' } as const;

export const EVENTS = {
  name: 'events',
  columns: {
    position: { type: 'id', generated: 'always' }, stream_id: text, stream_version: integer, type: text, data: text, metadata: text, recorded_at: text,
  },
  primaryKey: ['position'],
  unique: { events_stream_version_unique: ['stream_id', 'stream_version'] },
} as const satisfies TableDeclaration;

/** The read model: one row a pet. */
export const PETS = {
  name: 'pets',
  columns: { id, name: text, category_id: id, status: nullableText, version: integer, created_at: text, updated_at: text },
  primaryKey: ['id'],
  // Serves `WHERE status = ? ORDER BY id LIMIT ?` without a sort; the unfiltered listing walks the primary key.
  indexes: { pets_status_id: ['status', 'id'] },
} as const satisfies TableDeclaration;

/** The read model of store orders: one row an order. */
export const ORDERS = {
  name: 'orders',
  columns: { id, pet_id: id, status: text, ship_date: nullableText, version: integer, created_at: text, updated_at: text },
  primaryKey: ['id'],
  // Serve the listing by status or by pet, in id order, without a sort.
  indexes: { orders_status_id: ['status', 'id'], orders_pet_id_id: ['pet_id', 'id'] },
} as const satisfies TableDeclaration;

/** Ids drawn for each aggregate (`<aggregate>_id`), a row each; PostgreSQL takes them from the sequences `<aggregate>_ids` instead. */
export const SEQUENCES = {
  name: 'sequences', columns: { name: text, value: integer }, primaryKey: ['name'], only: 'sqlite',
} as const satisfies TableDeclaration;

export const API_KEYS = {
  name: 'api_keys',
  columns: { id: { type: 'id', generated: 'by default' }, key_hash: text, label: text, created_at: text, revoked_at: nullableText },
  primaryKey: ['id'],
  unique: { api_keys_key_hash_key: ['key_hash'] },
} as const satisfies TableDeclaration;

export const IDEMPOTENCY_KEYS = {
  name: 'idempotency_keys',
  // `answer`: what the first request was answered (JSON), answered again to a repeat.
  columns: { scope: text, idempotency_key: text, fingerprint: text, answer: text, expires_at: text },
  primaryKey: ['scope', 'idempotency_key'],
  indexes: { idempotency_keys_expires_at: ['expires_at'] },
} as const satisfies TableDeclaration;

/** One row, rewritten by the readiness probe's write check. */
export const STORE_HEALTH = {
  name: 'store_health', columns: { id: integer, checked_at: text }, primaryKey: ['id'],
} as const satisfies TableDeclaration;

/**
 * A webhook subscription and its delivery state (see `WebhookSubscriptions`). `types`: a JSON array of
 * event types, null for every type. `previous_secret`: the one the last rotation replaced, signing beside
 * `secret` until `previous_secret_until`. `replays`: how many were asked for; a delivery run writes only while it is unchanged.
 */
export const WEBHOOKS = {
  name: 'webhooks',
  columns: {
    id: text, owner_key_id: text, url: text, types: nullableText, pet_id: { type: 'id', nullable: true }, secret: text, created_at: text, status: text,
    position: id, attempts: integer, last_error: nullableText, next_try_at: nullableText, failing_since: nullableText, last_delivered_at: nullableText,
    lease_holder: nullableText, lease_expires_at: nullableText, batch_size: { type: 'integer', default: 1 }, batch_until: { type: 'id', nullable: true },
    max_per_second: { type: 'integer', nullable: true }, previous_secret: nullableText, previous_secret_until: nullableText, replays: { type: 'integer', default: 0 },
  },
  primaryKey: ['id'],
  indexes: { webhooks_owner_key_id: ['owner_key_id'] },
} as const satisfies TableDeclaration;

/**
 * Each subscription's recent attempts (see `WebhookAttempt`): `message_id` the `webhook-id` sent, `positions`
 * a JSON array, `response_status` null when the receiver did not answer. Pruned as they are written.
 */
export const WEBHOOK_ATTEMPTS = {
  name: 'webhook_attempts',
  columns: {
    id: { type: 'id', generated: 'by default' }, webhook_id: text, attempted_at: text, message_id: text, positions: text,
    response_status: { type: 'integer', nullable: true }, duration_ms: integer, error: nullableText,
  },
  primaryKey: ['id'],
  indexes: { webhook_attempts_webhook_id_id: ['webhook_id', 'id'] },
} as const satisfies TableDeclaration;

/**
 * A consumer group (see `ConsumerGroups`), named within the key that owns it; `id` keys its events' rows.
 * `types`: a JSON array of event types, null for every type. `taken_to`: the group's cursor in the log, every
 * event up to it taken in (a row of `consumer_group_exceptions` while leased, waiting or parked; none once acked).
 */
export const CONSUMER_GROUPS = {
  name: 'consumer_groups',
  columns: {
    id: { type: 'id', generated: 'by default' }, owner_key_id: text, name: text, ack_timeout_ms: integer, max_deliveries: integer, start: text, types: nullableText,
    created_at: text, taken_to: id,
  },
  primaryKey: ['id'],
  unique: { consumer_groups_owner_key_id_name_unique: ['owner_key_id', 'name'] },
} as const satisfies TableDeclaration;

/**
 * A group's events that are not simply before its cursor and acked, and only those (the event itself is
 * read from the log by position): `state` `ready` (waiting to be handed out, not before `not_before`: a
 * retry, a release, or one held back by an earlier unsettled event of its pet), `leased` (held by
 * `consumer` under the token `lease` until `lease_expires_at`) or `parked` (with `reason`).
 */
export const CONSUMER_GROUP_EXCEPTIONS = {
  name: 'consumer_group_exceptions',
  columns: {
    group_id: id, position: id, stream_id: text, state: text, deliveries: integer, not_before: nullableText,
    lease: nullableText, consumer: nullableText, lease_expires_at: nullableText, reason: nullableText, parked_at: nullableText,
  },
  primaryKey: ['group_id', 'position'],
  indexes: {
    // The earliest unsettled event of a pet (per-pet order), and the group's rows in one state by position.
    consumer_group_exceptions_stream: ['group_id', 'stream_id', 'position'],
    consumer_group_exceptions_state: ['group_id', 'state', 'position'],
  },
} as const satisfies TableDeclaration;

/**
 * Fresh events a claim leased together, as one row: every event of the log from `from_position` to
 * `to_position` (`events` of them), held by `consumer` under the token `lease` until `lease_expires_at`,
 * on their first delivery. Only for groups of every type, and only runs with no event held back between
 * them. An ack of them all deletes the row; anything else done to them (a partial ack, a nack, an extend,
 * the lease expiring) first turns it into one `consumer_group_exceptions` row an event.
 */
export const CONSUMER_GROUP_LEASES = {
  name: 'consumer_group_leases',
  columns: {
    group_id: id, from_position: id, to_position: id, events: integer, lease: text, consumer: text, lease_expires_at: text,
  },
  primaryKey: ['group_id', 'from_position'],
} as const satisfies TableDeclaration;

/** When each consumer of a group last claimed (`last_seen_at`), so that idle workers show too; rows older than the group's window are pruned. */
export const CONSUMER_GROUP_CONSUMERS = {
  name: 'consumer_group_consumers',
  columns: { owner_key_id: text, group_name: text, consumer: text, last_seen_at: text },
  primaryKey: ['owner_key_id', 'group_name', 'consumer'],
} as const satisfies TableDeclaration;

export const TABLES: readonly TableDeclaration[] = [
  EVENTS, PETS, ORDERS, SEQUENCES, API_KEYS, IDEMPOTENCY_KEYS, STORE_HEALTH, WEBHOOKS, WEBHOOK_ATTEMPTS, CONSUMER_GROUPS, CONSUMER_GROUP_EXCEPTIONS, CONSUMER_GROUP_LEASES, CONSUMER_GROUP_CONSUMERS,
];

/** A read model's table, as declared: what an aggregate's projection writes into (`ReadModel.table`), keyed by `id`, its stream's `version` beside. */
export function readModelTable(name: string): TableDeclaration {
  const table = TABLES.find((each) => each.name === name);
  if (!table || !('id' in table.columns) || !('version' in table.columns)) throw new Error(`no read-model table ${name} with id and version columns is declared`);
  return table;
}

type ValueOf<C extends ColumnDeclaration> = (C['type'] extends 'text' ? string : number) | (C extends { nullable: true } ? null : never);

/** A table's row as Kysely types it: generated columns may be left out of an insert. */
export type TableRow<T extends TableDeclaration> = {
  -readonly [K in keyof T['columns']]: T['columns'][K] extends { generated: string } ? Generated<ValueOf<T['columns'][K]>> : ValueOf<T['columns'][K]>;
};

/** A table's row as read. */
export type ReadRow<T extends TableDeclaration> = { -readonly [K in keyof T['columns']]: ValueOf<T['columns'][K]> };

export type EventsTable = TableRow<typeof EVENTS>;
export type PetsTable = TableRow<typeof PETS>;
export type OrdersTable = TableRow<typeof ORDERS>;
export type SequencesTable = TableRow<typeof SEQUENCES>;
export type ApiKeysTable = TableRow<typeof API_KEYS>;
export type IdempotencyKeysTable = TableRow<typeof IDEMPOTENCY_KEYS>;
export type StoreHealthTable = TableRow<typeof STORE_HEALTH>;
export type WebhooksTable = TableRow<typeof WEBHOOKS>;
export type WebhookAttemptsTable = TableRow<typeof WEBHOOK_ATTEMPTS>;
export type ConsumerGroupsTable = TableRow<typeof CONSUMER_GROUPS>;
export type ConsumerGroupExceptionsTable = TableRow<typeof CONSUMER_GROUP_EXCEPTIONS>;
export type ConsumerGroupLeasesTable = TableRow<typeof CONSUMER_GROUP_LEASES>;
export type ConsumerGroupConsumersTable = TableRow<typeof CONSUMER_GROUP_CONSUMERS>;

export interface PetStoreDatabase {
  events: EventsTable;
  pets: PetsTable;
  orders: OrdersTable;
  sequences: SequencesTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  store_health: StoreHealthTable;
  webhooks: WebhooksTable;
  webhook_attempts: WebhookAttemptsTable;
  consumer_groups: ConsumerGroupsTable;
  consumer_group_exceptions: ConsumerGroupExceptionsTable;
  consumer_group_leases: ConsumerGroupLeasesTable;
  consumer_group_consumers: ConsumerGroupConsumersTable;
}

/** A table's column names, in their declared order. */
export function columnsOf<T extends TableDeclaration>(table: T): readonly (keyof T['columns'] & string)[] {
  return Object.keys(table.columns);
}

/** The values of `rows`, row after row, each in its table's column order: what the insert statements below take. */
export function rowValues<T extends TableDeclaration>(table: T, rows: readonly ReadRow<T>[]): unknown[] {
  const columns = columnsOf(table);
  const values = new Array<unknown>(rows.length * columns.length);
  let at = 0;
  for (const row of rows) for (const column of columns) values[at++] = row[column];
  return values;
}

/** SQLite: `insert into <into> (<columns>) values (?, …), …` for `count` rows. */
export function sqliteInsert(table: TableDeclaration, count: number, into: string = table.name): string {
  const columns = columnsOf(table);
  const row = `(${columns.map(() => '?').join(', ')})`;
  return `insert into ${into} (${columns.join(', ')}) values ${new Array(count).fill(row).join(', ')}`;
}

/** A column's type as PostgreSQL names it. */
export function postgresType(type: ColumnType): string {
  return type === 'id' ? 'bigint' : type;
}

/**
 * PostgreSQL: the rows of the JSON parameter `$n` (`postgresRowsJson`: an array of objects keyed by
 * column) as `table`'s row type, its columns selected in their declared order.
 */
export function postgresJsonRows(table: TableDeclaration, parameter: number): string {
  return `select ${columnsOf(table).join(', ')} from json_populate_recordset(null::${table.name}, $${parameter}::json)`;
}

/**
 * PostgreSQL: `insert into <into> (<columns>)` the rows of the JSON parameter `$n` (`postgresJsonRows`);
 * a column generated always is written as the rows give it.
 */
export function postgresInsert(table: TableDeclaration, parameter: number, into: string = table.name): string {
  const overriding = Object.values(table.columns).some((column) => column.generated === 'always') ? ' overriding system value' : '';
  return `insert into ${into} (${columnsOf(table).join(', ')})${overriding} ${postgresJsonRows(table, parameter)}`;
}

/** `rows` as the one JSON parameter `postgresJsonRows` reads: one text however many rows, serialized natively. */
export function postgresRowsJson(rows: readonly object[]): string {
  return JSON.stringify(rows);
}

/** Creates an empty table shaped as `table` declares it, under `name` (a scratch copy; no indexes). */
export async function createDeclaredTable(db: Kysely<any>, table: TableDeclaration, name: string, options: { temporary: boolean }): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let builder = db.schema.createTable(name);
  if (options.temporary) builder = builder.temporary();
  for (const [column, declared] of Object.entries(table.columns)) {
    const type = postgres ? postgresType(declared.type) : declared.type === 'text' ? 'text' : 'integer';
    builder = builder.addColumn(column, type as 'text', (built) => {
      let result = declared.nullable ? built : built.notNull();
      if (declared.default !== undefined) result = result.defaultTo(declared.default);
      return result;
    });
  }
  await builder.addPrimaryKeyConstraint(`${name}_pkey`, table.primaryKey as never).execute();
}

/** An event as `events` stores it, before it has a position. */
export type NewEventRow = Omit<ReadRow<typeof EVENTS>, 'position'>;

/** An event as `events` holds it. */
export type EventRow = ReadRow<typeof EVENTS>;

/** The row of an event: the `version`th of stream `streamId`, its data and metadata as JSON text. */
export function newEventRow(streamId: string, version: number, type: string, data: string, metadata: string, recordedAt: string): NewEventRow {
  return { stream_id: streamId, stream_version: version, type, data, metadata, recorded_at: recordedAt };
}

/** The stream an event row belongs to, and the stream's version it is. */
export function streamPlaceOf(row: NewEventRow): readonly [streamId: string, version: number] {
  return [row.stream_id, row.stream_version];
}

/** A stored row in today's shape, whatever schema version it was written with. */
export function storedEventFromRow(row: EventRow): StoredEvent {
  const metadata = JSON.parse(row.metadata) as EventMetadata;
  return {
    position: row.position,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    event: upcast(row.type, metadata.schemaVersion, JSON.parse(row.data) as Record<string, unknown>),
    metadata,
  };
}

/** A pet's row of the read model `pets`. */
export type PetRow = PetsTable;

/** The columns of `pets` a Pet is read from (`petFromRow`): what listings select. */
export const PET_FIELD_COLUMNS = ['id', 'name', 'category_id', 'status'] as const satisfies readonly (keyof PetRow)[];
