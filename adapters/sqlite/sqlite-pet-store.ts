import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import type { Pet } from '../../domain/index.ts';
import type {
  CatalogChanges, Clock, EventStore, IdempotencyKeys, IdempotencyRecord, PetCatalog, PetIds, PetQuery, PetStorePorts, StoredEvent,
  StreamRead, VersionedPet,
} from '../../application/index.ts';
import { createCatalogWatch } from './catalog-watch.ts';
import { createGroupCommit } from './group-commit.ts';
import type { GroupCommit } from './group-commit.ts';
import { openSqlite } from './open-sqlite.ts';
import type { PetStoreDatabase } from './schema.ts';
import { translateErrors } from './store-errors.ts';
import { petFromRow, storedEventFromRow } from './stored-rows.ts';
import type { EventRow } from './stored-rows.ts';

export interface SqlitePetStore extends PetStorePorts {
  readonly db: Kysely<PetStoreDatabase>;
  /** Tells caches of the catalogue what changed, so they stay exact. */
  readonly changes: CatalogChanges;
  /** Waits for the writes in flight, then closes the database. */
  close(): Promise<void>;
}

export async function openSqlitePetStore(path: string, options: { clock?: Clock } = {}): Promise<SqlitePetStore> {
  const { db, database } = await openSqlite(path);
  const clock = options.clock ?? { now: () => new Date() };
  const changes = createCatalogWatch(database, path);
  const writes = createGroupCommit(db, database, changes, clock);
  return {
    db,
    changes,
    eventStore: createSqliteEventStore(db, writes),
    catalog: createSqlitePetCatalog(db),
    petIds: createSqlitePetIds(writes),
    idempotencyKeys: createSqliteIdempotencyKeys(db),
    clock,
    async close() {
      await writes.drain();
      changes.close();
      await db.destroy();
    },
  };
}

/** Reads through Kysely; every append goes through the group commit. */
export function createSqliteEventStore(db: Kysely<PetStoreDatabase>, writes: GroupCommit): EventStore {
  return {
    async readStream(streamId: string): Promise<StreamRead> {
      const rows = await translateErrors(() =>
        db.selectFrom('events').selectAll().where('stream_id', '=', streamId).orderBy('stream_version').execute(),
      );
      const events = rows.map(storedEventFromRow);
      return { version: events.at(-1)?.streamVersion ?? 0, events };
    },

    async readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
      const rows = await translateErrors(() =>
        db.selectFrom('events').selectAll().where('position', '>', afterPosition).orderBy('position').limit(limit).execute(),
      );
      return rows.map((row) => storedEventFromRow(row as EventRow));
    },

    append: (streamId, expected, events, metadata, options) => writes.append(streamId, expected, events, metadata, options),
  };
}

// Precompiled: the listing is the hot read, and building the query anew each time costs more than running it.
// `id > ?` with 0 for a listing from the start keeps one plan per filter.
const LIST_ALL = 'select id, name, category_id, status from pets where id > ? order by id limit ?';
const LIST_BY_STATUS = 'select id, name, category_id, status from pets where status = ? and id > ? order by id limit ?';

type PetListRow = { id: number; name: string; category_id: number; status: string | null };

export function createSqlitePetCatalog(db: Kysely<PetStoreDatabase>): PetCatalog {
  return {
    async list({ status, limit, after = 0 }: PetQuery): Promise<Pet[]> {
      const query = status === undefined
        ? CompiledQuery.raw(LIST_ALL, [after, limit])
        : CompiledQuery.raw(LIST_BY_STATUS, [status, after, limit]);
      const { rows } = await translateErrors(() => db.executeQuery<PetListRow>(query));
      return rows.map(petFromRow);
    },
    async get(id: number): Promise<VersionedPet | undefined> {
      const row = await translateErrors(() =>
        db.selectFrom('pets').select(['id', 'name', 'category_id', 'status', 'version']).where('id', '=', id).executeTakeFirst(),
      );
      return row && { pet: petFromRow(row), version: row.version };
    },
  };
}

export function createSqlitePetIds(writes: GroupCommit): PetIds {
  return { next: () => writes.nextId() };
}

export function createSqliteIdempotencyKeys(db: Kysely<PetStoreDatabase>): IdempotencyKeys {
  return {
    async find(scope: string, key: string, now: Date): Promise<IdempotencyRecord | undefined> {
      const row = await translateErrors(() =>
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
