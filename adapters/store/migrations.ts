import { Migrator, PostgresAdapter, sql } from 'kysely';
import type { Kysely, Migration, MigrationProvider } from 'kysely';

/**
 * The database speaks PostgreSQL (else SQLite). Migrations differ only where the two must: 64-bit
 * ids and positions, how a column generates its values, and where pet ids come from.
 */
export function onPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Ordered schema changes, one set for SQLite and PostgreSQL: the history that builds the tables
 * `schema.ts` declares (a test holds the two together). Names sort in the order they apply; never
 * edit one that has shipped (what a migration does on SQLite stays exactly as it was).
 */
export const migrations: Record<string, Migration> = {
  '0001_events_pets_sequences_api_keys': {
    async up(db: Kysely<any>) {
      const postgres = onPostgres(db);
      // SQLite's INTEGER is 64-bit already; PostgreSQL's is 32-bit.
      const id = postgres ? 'bigint' : 'integer';
      await db.schema
        .createTable('events')
        // Never reused, even after the newest row is deleted: AUTOINCREMENT on SQLite, an identity on PostgreSQL.
        .addColumn('position', id, (column) => (postgres ? column.primaryKey().generatedAlwaysAsIdentity() : column.primaryKey().autoIncrement()))
        .addColumn('stream_id', 'text', (column) => column.notNull())
        .addColumn('stream_version', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('data', 'text', (column) => column.notNull())
        .addColumn('metadata', 'text', (column) => column.notNull())
        .addColumn('recorded_at', 'text', (column) => column.notNull())
        .addUniqueConstraint('events_stream_version_unique', ['stream_id', 'stream_version'])
        .execute();

      await db.schema
        .createTable('pets')
        .addColumn('id', id, (column) => column.primaryKey())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('category_id', id, (column) => column.notNull())
        .addColumn('status', 'text')
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .execute();
      // Serves `WHERE status = ? ORDER BY id LIMIT ?` without a sort; the unfiltered listing walks the primary key.
      await db.schema.createIndex('pets_status_id').on('pets').columns(['status', 'id']).execute();

      if (postgres) {
        // A real sequence: many instances take ids at once without waiting for one another.
        await sql`create sequence pet_ids as bigint`.execute(db);
      } else {
        await db.schema
          .createTable('sequences')
          .addColumn('name', 'text', (column) => column.primaryKey())
          .addColumn('value', 'integer', (column) => column.notNull())
          .execute();
        await db.insertInto('sequences').values({ name: 'pet_id', value: 0 }).execute();
      }

      await db.schema
        .createTable('api_keys')
        .addColumn('id', id, (column) => (postgres ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement()))
        .addColumn('key_hash', 'text', (column) => column.notNull().unique())
        .addColumn('label', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
    },
  },
  '0002_idempotency_keys': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('scope', 'text', (column) => column.notNull())
        .addColumn('idempotency_key', 'text', (column) => column.notNull())
        .addColumn('fingerprint', 'text', (column) => column.notNull())
        .addColumn('pet', 'text', (column) => column.notNull())
        .addColumn('expires_at', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'idempotency_key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
    },
  },
  '0003_store_health': {
    async up(db: Kysely<any>) {
      // One row the readiness probe rewrites now and then: proof that a write can commit.
      await db.schema
        .createTable('store_health')
        .addColumn('id', 'integer', (column) => column.primaryKey())
        .addColumn('checked_at', 'text', (column) => column.notNull())
        .execute();
    },
  },
  '0004_webhooks': {
    async up(db: Kysely<any>) {
      const id = onPostgres(db) ? 'bigint' : 'integer';
      // A subscription and its delivery state in one row: the position it has delivered up to, the
      // retry state of the next event, and the lease of the one instance delivering it.
      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('owner_key_id', 'text', (column) => column.notNull())
        .addColumn('url', 'text', (column) => column.notNull())
        .addColumn('types', 'text')
        .addColumn('pet_id', id)
        .addColumn('secret', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('position', id, (column) => column.notNull())
        .addColumn('attempts', 'integer', (column) => column.notNull())
        .addColumn('last_error', 'text')
        .addColumn('next_try_at', 'text')
        .addColumn('failing_since', 'text')
        .addColumn('last_delivered_at', 'text')
        .addColumn('lease_holder', 'text')
        .addColumn('lease_expires_at', 'text')
        .execute();
      await db.schema.createIndex('webhooks_owner_key_id').on('webhooks').column('owner_key_id').execute();
    },
  },
  '0005_webhook_batches': {
    async up(db: Kysely<any>) {
      const id = onPostgres(db) ? 'bigint' : 'integer';
      // Events per request (1: each alone), and the last position of the batch in flight, fixed before
      // its first attempt so that every attempt, after a restart too, sends the same batch.
      await db.schema.alterTable('webhooks').addColumn('batch_size', 'integer', (column) => column.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('webhooks').addColumn('batch_until', id).execute();
    },
  },
  '0007_webhook_rate': {
    async up(db: Kysely<any>) {
      // Requests a second at most to the receiver; null: as fast as it answers.
      await db.schema.alterTable('webhooks').addColumn('max_per_second', 'integer').execute();
    },
  },
  '0008_webhook_attempts_and_rotation': {
    async up(db: Kysely<any>) {
      const postgres = onPostgres(db);
      const id = postgres ? 'bigint' : 'integer';
      // The secret a rotation replaced, which still signs beside the new one until `previous_secret_until`.
      await db.schema.alterTable('webhooks').addColumn('previous_secret', 'text').execute();
      await db.schema.alterTable('webhooks').addColumn('previous_secret_until', 'text').execute();
      // Counts replays: a delivery run writes its state only while the count is the one it began with.
      await db.schema.alterTable('webhooks').addColumn('replays', 'integer', (column) => column.notNull().defaultTo(0)).execute();
      // Each subscription's recent attempts, newest kept: pruned as they are written (a count and an age per subscription).
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', id, (column) => (postgres ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement()))
        .addColumn('webhook_id', 'text', (column) => column.notNull())
        .addColumn('attempted_at', 'text', (column) => column.notNull())
        .addColumn('message_id', 'text', (column) => column.notNull())
        .addColumn('positions', 'text', (column) => column.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('duration_ms', 'integer', (column) => column.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema.createIndex('webhook_attempts_webhook_id_id').on('webhook_attempts').columns(['webhook_id', 'id']).execute();
    },
  },
  '0009_consumer_groups': {
    async up(db: Kysely<any>) {
      const id = onPostgres(db) ? 'bigint' : 'integer';
      // A group's settings and how far into the log it has taken events; its unacked events beside it.
      await db.schema
        .createTable('consumer_groups')
        .addColumn('owner_key_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('ack_timeout_ms', 'integer', (column) => column.notNull())
        .addColumn('max_deliveries', 'integer', (column) => column.notNull())
        .addColumn('start', 'text', (column) => column.notNull())
        .addColumn('types', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('taken_to', id, (column) => column.notNull())
        .addPrimaryKeyConstraint('consumer_groups_pkey', ['owner_key_id', 'name'])
        .execute();
      await db.schema
        .createTable('consumer_group_events')
        .addColumn('owner_key_id', 'text', (column) => column.notNull())
        .addColumn('group_name', 'text', (column) => column.notNull())
        .addColumn('position', id, (column) => column.notNull())
        .addColumn('stream_id', 'text', (column) => column.notNull())
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('deliveries', 'integer', (column) => column.notNull())
        .addColumn('not_before', 'text')
        .addColumn('lease', 'text')
        .addColumn('consumer', 'text')
        .addColumn('lease_expires_at', 'text')
        .addColumn('reason', 'text')
        .addColumn('parked_at', 'text')
        .addColumn('event', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('consumer_group_events_pkey', ['owner_key_id', 'group_name', 'position'])
        .execute();
      await db.schema.createIndex('consumer_group_events_stream').on('consumer_group_events').columns(['owner_key_id', 'group_name', 'stream_id', 'position']).execute();
      await db.schema.createIndex('consumer_group_events_state').on('consumer_group_events').columns(['owner_key_id', 'group_name', 'state', 'position']).execute();
    },
  },
  '0010_consumer_group_consumers': {
    async up(db: Kysely<any>) {
      // Who claimed from each group and when, so that a worker holding no lease shows too.
      await db.schema
        .createTable('consumer_group_consumers')
        .addColumn('owner_key_id', 'text', (column) => column.notNull())
        .addColumn('group_name', 'text', (column) => column.notNull())
        .addColumn('consumer', 'text', (column) => column.notNull())
        .addColumn('last_seen_at', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('consumer_group_consumers_pkey', ['owner_key_id', 'group_name', 'consumer'])
        .execute();
    },
  },
  '0011_idempotency_answers': {
    async up(db: Kysely<any>) {
      // A record keeps the answer of any creation, not only a pet's.
      await db.schema.alterTable('idempotency_keys').renameColumn('pet', 'answer').execute();
    },
  },
  '0012_orders': {
    async up(db: Kysely<any>) {
      const postgres = onPostgres(db);
      const id = postgres ? 'bigint' : 'integer';
      await db.schema
        .createTable('orders')
        .addColumn('id', id, (column) => column.primaryKey())
        .addColumn('pet_id', id, (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('ship_date', 'text')
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .execute();
      await db.schema.createIndex('orders_status_id').on('orders').columns(['status', 'id']).execute();
      await db.schema.createIndex('orders_pet_id_id').on('orders').columns(['pet_id', 'id']).execute();
      // Order ids from 1, as pet ids: SQLite's row in `sequences` is written at the first draw.
      if (postgres) await sql`create sequence order_ids as bigint`.execute(db);
    },
  },
  '0013_consumer_group_exceptions': {
    async up(db: Kysely<any>) {
      const postgres = onPostgres(db);
      const id = postgres ? 'bigint' : 'integer';
      // Groups get an integer id to key their events' rows by; their events are no longer copied from the
      // log: only those leased, waiting or parked keep a row, and every such row is carried over.
      await db.schema.alterTable('consumer_groups').renameTo('consumer_groups_before').execute();
      if (postgres) await sql`alter table consumer_groups_before rename constraint consumer_groups_pkey to consumer_groups_before_pkey`.execute(db);
      await db.schema
        .createTable('consumer_groups')
        .addColumn('id', id, (column) => (postgres ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement()))
        .addColumn('owner_key_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('ack_timeout_ms', 'integer', (column) => column.notNull())
        .addColumn('max_deliveries', 'integer', (column) => column.notNull())
        .addColumn('start', 'text', (column) => column.notNull())
        .addColumn('types', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('taken_to', id, (column) => column.notNull())
        .addUniqueConstraint('consumer_groups_owner_key_id_name_unique', ['owner_key_id', 'name'])
        .execute();
      const settings = 'owner_key_id, name, ack_timeout_ms, max_deliveries, start, types, created_at, taken_to';
      await sql`insert into consumer_groups (${sql.raw(settings)}) select ${sql.raw(settings)} from consumer_groups_before order by owner_key_id, name`.execute(db);
      await db.schema
        .createTable('consumer_group_exceptions')
        .addColumn('group_id', id, (column) => column.notNull())
        .addColumn('position', id, (column) => column.notNull())
        .addColumn('stream_id', 'text', (column) => column.notNull())
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('deliveries', 'integer', (column) => column.notNull())
        .addColumn('not_before', 'text')
        .addColumn('lease', 'text')
        .addColumn('consumer', 'text')
        .addColumn('lease_expires_at', 'text')
        .addColumn('reason', 'text')
        .addColumn('parked_at', 'text')
        .addPrimaryKeyConstraint('consumer_group_exceptions_pkey', ['group_id', 'position'])
        .execute();
      await db.schema.createIndex('consumer_group_exceptions_stream').on('consumer_group_exceptions').columns(['group_id', 'stream_id', 'position']).execute();
      await db.schema.createIndex('consumer_group_exceptions_state').on('consumer_group_exceptions').columns(['group_id', 'state', 'position']).execute();
      // A lease was `<token>.<position>`; its row keeps the token. Rows of acked events never existed.
      await sql`
        insert into consumer_group_exceptions (group_id, position, stream_id, state, deliveries, not_before, lease, consumer, lease_expires_at, reason, parked_at)
        select g.id, e.position, e.stream_id, e.state, e.deliveries, e.not_before,
          substr(e.lease, 1, length(e.lease) - length(cast(e.position as text)) - 1), e.consumer, e.lease_expires_at, e.reason, e.parked_at
        from consumer_group_events e join consumer_groups g on g.owner_key_id = e.owner_key_id and g.name = e.group_name`.execute(db);
      await db.schema.dropTable('consumer_group_events').execute();
      await db.schema.dropTable('consumer_groups_before').execute();
    },
  },
  '0014_consumer_group_leases': {
    async up(db: Kysely<any>) {
      const id = onPostgres(db) ? 'bigint' : 'integer';
      // Leases taken before stay one row an event in consumer_group_exceptions, which keeps serving them.
      await db.schema
        .createTable('consumer_group_leases')
        .addColumn('group_id', id, (column) => column.notNull())
        .addColumn('from_position', id, (column) => column.notNull())
        .addColumn('to_position', id, (column) => column.notNull())
        .addColumn('events', 'integer', (column) => column.notNull())
        .addColumn('lease', 'text', (column) => column.notNull())
        .addColumn('consumer', 'text', (column) => column.notNull())
        .addColumn('lease_expires_at', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('consumer_group_leases_pkey', ['group_id', 'from_position'])
        .execute();
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Kysely's Migrator over our migrations, recording progress in its usual tables. */
export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider });
}

/** Fails with the migration's own error when any migration fails. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const { error, results } = await createMigrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '(setup)'} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const all = await createMigrator(db).getMigrations();
  return all.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}

