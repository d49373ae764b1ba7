import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Pet, PetEvent, PetStatus } from '../../domain/index.ts';
import { IdempotencyKeyTaken, metadataFor, projectPet, StreamVersionConflict, upcast } from '../../application/index.ts';
import type {
  AppendMetadata, AppendOptions, AppendResult, Clock, EventMetadata, EventStore, ExpectedVersion, IdempotencyKeys, IdempotencyRecord, PetCatalog, PetQuery, PetStorePorts, StoredEvent, StreamRead, VersionedPet,
} from '../../application/index.ts';
import { translated } from './sql-dialect.ts';
import type { SqlDialect } from './sql-dialect.ts';
import type { EventsTable, PetStoreDatabase } from './schema.ts';
import type { CatalogChanges } from './catalog-changes.ts';

/** The ports over a SQL database, plus what the composition root and the CLI need from it. */
export interface SqlPetStore extends PetStorePorts {
  readonly db: Kysely<PetStoreDatabase>;
  readonly dialect: SqlDialect;
  /** Where the store can tell caches of the catalogue about every commit (its own and other processes'); absent otherwise. */
  readonly changes?: CatalogChanges;
  /** True when the database answers a trivial query now; never throws. For a readiness probe. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** Every port over `db`; `close` is the opener's way of letting go of it. */
export function createSqlPetStore(db: Kysely<PetStoreDatabase>, dialect: SqlDialect, options: { clock?: Clock; close: () => Promise<void> }): SqlPetStore {
  const clock = options.clock ?? { now: () => new Date() };
  return {
    db,
    dialect,
    eventStore: createSqlEventStore(db, dialect, clock),
    catalog: createSqlPetCatalog(db, dialect),
    idempotencyKeys: createSqlIdempotencyKeys(db, dialect),
    clock,
    async ready() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close: options.close,
  };
}

export type EventRow = Omit<EventsTable, 'position'> & { position: number };

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

function createSqlEventStore(db: Kysely<PetStoreDatabase>, dialect: SqlDialect, clock: Clock): EventStore {
  const versionOf = async (executor: Kysely<PetStoreDatabase>, streamId: string): Promise<number> => {
    const row = await executor
      .selectFrom('events')
      .select(sql<number | null>`max(stream_version)`.as('version'))
      .where('stream_id', '=', streamId)
      .executeTakeFirst();
    return row?.version ?? 0;
  };

  const eventStore: EventStore = {
    async readStream(streamId: string): Promise<StreamRead> {
      const rows = await translated(dialect, () =>
        db.selectFrom('events').selectAll().where('stream_id', '=', streamId).orderBy('stream_version').execute(),
      );
      const events = rows.map(storedEventFromRow);
      return { version: events.at(-1)?.streamVersion ?? 0, events };
    },

    async readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
      const rows = await translated(dialect, () =>
        db.selectFrom('events').selectAll().where('position', '>', afterPosition).orderBy('position').limit(limit).execute(),
      );
      return rows.map(storedEventFromRow);
    },

    append(streamId, expected, events, metadata, options = {}) {
      return inAppendTransaction(() => streamId, expected, (trx) => appendWithin(trx, streamId, expected, events, metadata, options));
    },

    appendNew(build, metadata) {
      let made: ReturnType<typeof build> | undefined;
      // The id is drawn on the append's connection, in its transaction: one round of the pool, not two.
      return inAppendTransaction(() => made?.streamId, 'no_stream', async (trx) => {
        made = build(await dialect.nextPetId(trx));
        await appendWithin(trx, made.streamId, 'no_stream', made.events, metadata, made);
        return made;
      });
    },
  };
  return eventStore;

  /** Runs an append's transaction; `streamId` names the stream it wrote to, once known. */
  async function inAppendTransaction<T>(
    streamId: () => string | undefined, expected: ExpectedVersion, work: (trx: Transaction<PetStoreDatabase>) => Promise<T>,
  ): Promise<T> {
    try {
      return await translated(dialect, () => db.transaction().execute(work));
    } catch (error) {
      // Another writer appended between this one's read and its writes: a constraint decided.
      const written = streamId();
      if (written !== undefined && (dialect.isUniqueViolation(error, 'events_stream_version_unique') || dialect.isUniqueViolation(error, 'pets_pkey'))) {
        throw new StreamVersionConflict(written, expected, await translated(dialect, () => versionOf(db, written)));
      }
      throw error;
    }
  }

  async function appendWithin(
    trx: Transaction<PetStoreDatabase>, streamId: string, expected: ExpectedVersion, events: readonly PetEvent[], metadata: AppendMetadata, options: AppendOptions,
  ): Promise<AppendResult> {
    const actual = await versionOf(trx, streamId);
    assertExpectedVersion(streamId, expected, actual);
    if (options.remember) await remember(trx, options.remember, clock.now());
    const version = actual + events.length;
    await projectIntoPets(trx, events, version, metadata.recordedAt);
    // The events last: on PostgreSQL their insert takes the lock that keeps positions in commit
    // order, held only until the commit that follows.
    await dialect.insertEvents(trx, events.map((event, index) => ({
      stream_id: streamId,
      stream_version: actual + index + 1,
      type: event.type,
      data: JSON.stringify(event.data),
      metadata: JSON.stringify(metadataFor(event, metadata)),
      recorded_at: metadata.recordedAt,
    })));
    return { version };
  }
}

function assertExpectedVersion(streamId: string, expected: ExpectedVersion, actual: number): void {
  const matches = expected === 'no_stream' ? actual === 0 : expected === actual;
  if (!matches) throw new StreamVersionConflict(streamId, expected, actual);
}

/** Stores the idempotency record in the append's transaction, so a crash cannot keep one without the other. */
async function remember(trx: Transaction<PetStoreDatabase>, record: IdempotencyRecord, now: Date): Promise<void> {
  await trx
    .deleteFrom('idempotency_keys')
    .where('scope', '=', record.scope)
    .where('idempotency_key', '=', record.key)
    .where('expires_at', '<=', now.toISOString())
    .execute();
  const inserted = await trx
    .insertInto('idempotency_keys')
    .values({ scope: record.scope, idempotency_key: record.key, fingerprint: record.fingerprint, pet: JSON.stringify(record.pet), expires_at: record.expiresAt })
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  if (inserted.numInsertedOrUpdatedRows === 0n) throw new IdempotencyKeyTaken(record.scope, record.key);
}

/** The inline projection: same transaction as the append, so a reader never sees one without the other. */
async function projectIntoPets(trx: Transaction<PetStoreDatabase>, events: readonly PetEvent[], version: number, at: string): Promise<void> {
  const petId = events[0]?.data.id;
  if (petId === undefined) return;
  const existing = await trx.selectFrom('pets').selectAll().where('id', '=', petId).executeTakeFirst();
  const row = projectPet(existing && { pet: petFromRow(existing), version: existing.version }, events, version);
  const values = {
    name: row.pet.name,
    category_id: row.pet.categoryId,
    status: row.pet.status ?? null,
    version: row.version,
    updated_at: at,
  };
  if (existing) await trx.updateTable('pets').set(values).where('id', '=', petId).execute();
  else await trx.insertInto('pets').values({ id: petId, ...values, created_at: at }).execute();
}

function createSqlPetCatalog(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): PetCatalog {
  return {
    async list({ status, limit, after }: PetQuery): Promise<Pet[]> {
      let query = db.selectFrom('pets').select(['id', 'name', 'category_id', 'status']);
      if (status !== undefined) query = query.where('status', '=', status);
      if (after !== undefined) query = query.where('id', '>', after);
      const rows = await translated(dialect, () => query.orderBy('id').limit(limit).execute());
      return rows.map(petFromRow);
    },
    async get(id: number): Promise<VersionedPet | undefined> {
      const row = await translated(dialect, () =>
        db.selectFrom('pets').select(['id', 'name', 'category_id', 'status', 'version']).where('id', '=', id).executeTakeFirst(),
      );
      return row && { pet: petFromRow(row), version: row.version };
    },
  };
}

function createSqlIdempotencyKeys(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): IdempotencyKeys {
  return {
    async find(scope: string, key: string, now: Date): Promise<IdempotencyRecord | undefined> {
      const row = await translated(dialect, () =>
        db
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('scope', '=', scope)
          .where('idempotency_key', '=', key)
          .where('expires_at', '>', now.toISOString())
          .executeTakeFirst(),
      );
      return row && { scope, key, fingerprint: row.fingerprint, pet: JSON.parse(row.pet) as Pet, expiresAt: row.expires_at };
    },
  };
}

export function petFromRow(row: { id: number; name: string; category_id: number; status: string | null }): Pet {
  // Key order id, name, categoryId, status: the order clients see in JSON.
  return row.status === null
    ? { id: row.id, name: row.name, categoryId: row.category_id }
    : { id: row.id, name: row.name, categoryId: row.category_id, status: row.status as PetStatus };
}
