import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Pet } from '../../domain/index.ts';
import type {
  Clock, Commits, EventLog, EventStore, IdempotencyKeys, IdempotencyRecord, Inventory, OrderBook, PetCatalog, PetQuery, PetStorePorts, StoredEvent, StreamRead,
  VersionedPet,
} from '../../application/index.ts';
import { createSqlEventLog, readStream } from './sql-event-log.ts';
import { createSqlInventory, createSqlOrderBook } from './read-models/sql-order-book.ts';
import { petFromRow } from '../../application/index.ts';
import { PET_FIELD_COLUMNS } from './schema.ts';
import { translated } from './sql-dialect.ts';
import type { SqlDialect } from './sql-dialect.ts';
import type { PetStoreDatabase } from './schema.ts';

/** The pet store as the service's users see it: the application's ports, readiness and closing; no SQL. */
export interface PetStore extends PetStorePorts {
  /** The store's orders and the pets' inventory (`OrderPorts`). */
  readonly orders: OrderBook;
  readonly inventory: Inventory;
  /** The log by position, for its readers (the event feed). */
  readonly eventLog: EventLog;
  /** Tells what was committed, by this process or by any other on the same database. */
  readonly commits: Commits;
  /** True when the database answers a trivial query now; never throws. For a readiness probe. */
  ready(): Promise<boolean>;
  /** Where the backend can tell: the fault that stops writes from committing now, or undefined (see SqliteWrites). */
  checkWrites?(): Promise<Error | undefined>;
  /** Where the backend can tell: why other instances' commits are not followed now (a stalled listener), or undefined. */
  checkFollowing?(): Error | undefined;
  close(): Promise<void>;
}

/**
 * The database beneath a SQL store: private to `adapters/store/`, whose modules alone write SQL. What the
 * rest of the service gets is `OpenedStore` (`open-store.ts`): capabilities, no database.
 */
export interface SqlDatabase {
  readonly db: Kysely<PetStoreDatabase>;
  readonly dialect: SqlDialect;
  /**
   * Where a backend reports commits by watching the database (SQLite): runs writes that change neither
   * the log nor the catalogue (webhook delivery state, keys) as its own, so that they are not taken for
   * someone else's commit that may have changed anything. Absent: such writes go straight to `db`.
   */
  readonly writeOutsideLog?: <T>(work: (db: Kysely<PetStoreDatabase>) => Promise<T>) => Promise<T>;
  /**
   * Where a plain transaction has no bound from its arrival (PostgreSQL): a transaction answered within
   * the same bound as an append, refused with 503 past it. Absent: `db.transaction()`.
   */
  readonly boundedTransaction?: <T>(work: (db: Kysely<PetStoreDatabase>) => Promise<T>) => Promise<T>;
}

/** A backend's store: the ports and the database beneath them, for the store's own modules (and tests). */
export interface SqlPetStore extends PetStore, SqlDatabase {}

/** How a backend writes: its appends and creations (each executing the one append plan). */
export interface SqlWrites {
  readonly append: EventStore['append'];
  readonly create: EventStore['create'];
}

/** Every port over `db`, with the backend's `writes`; `close` is the opener's way of letting go of it. */
export function createSqlPetStore(
  db: Kysely<PetStoreDatabase>,
  dialect: SqlDialect,
  options: {
    clock: Clock; writes: SqlWrites; commits: Commits; list?: PetCatalog['list']; get?: PetCatalog['get']; checkWrites?: () => Promise<Error | undefined>; checkFollowing?: () => Error | undefined; close: () => Promise<void>;
  },
): SqlPetStore {
  const { clock, writes } = options;
  const catalog = createSqlPetCatalog(db, dialect);
  return {
    db,
    dialect,
    eventStore: { ...createSqlEventReads(db, dialect), append: writes.append, create: writes.create },
    catalog: { list: options.list ?? catalog.list, get: options.get ?? catalog.get },
    orders: createSqlOrderBook(db, dialect),
    inventory: createSqlInventory(db, dialect),
    idempotencyKeys: createSqlIdempotencyKeys(db, dialect),
    clock,
    eventLog: createSqlEventLog(db, dialect),
    commits: options.commits,
    async ready() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    ...(options.checkWrites ? { checkWrites: options.checkWrites } : {}),
    ...(options.checkFollowing ? { checkFollowing: options.checkFollowing } : {}),
    close: options.close,
  };
}

function createSqlEventReads(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): Pick<EventStore, 'readStream'> {
  return {
    readStream: (streamId: string): Promise<StreamRead> => readStream(db, dialect, streamId),
  };
}

function createSqlPetCatalog(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): PetCatalog {
  return {
    async list({ status, limit, after }: PetQuery): Promise<Pet[]> {
      let query = db.selectFrom('pets').select(PET_FIELD_COLUMNS);
      if (status !== undefined) query = query.where('status', '=', status);
      if (after !== undefined) query = query.where('id', '>', after);
      const rows = await translated(dialect, () => query.orderBy('id').limit(limit).execute());
      return rows.map(petFromRow);
    },
    async get(id: number): Promise<VersionedPet | undefined> {
      const row = await translated(dialect, () =>
        db.selectFrom('pets').select([...PET_FIELD_COLUMNS, 'version']).where('id', '=', id).executeTakeFirst(),
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
      return row && { scope, key, fingerprint: row.fingerprint, answer: JSON.parse(row.answer) as unknown, expiresAt: row.expires_at };
    },
  };
}
