import type { Kysely, Transaction } from 'kysely';
import type { PetStoreDatabase } from './schema.ts';

/**
 * What differs between the SQL databases the store runs on. Everything else (the queries of the
 * event store, the catalogue, the key table, the projection maintenance) is shared Kysely code.
 */
export interface SqlFlavour {
  readonly name: 'sqlite' | 'postgres';
  /** The database's own failures in the application's words (`StoreUnavailable`); anything else unchanged. */
  translateError(error: unknown): unknown;
  /** True when `error` says that the unique constraint named `constraint` refused a row. */
  isUniqueViolation(error: unknown, constraint: string): boolean;
  /** Runs inside every append's transaction, just before its events are inserted. */
  beforeInsertingEvents(trx: Transaction<PetStoreDatabase>): Promise<void>;
  /** A new pet id, never handed out before. */
  nextPetId(db: Kysely<PetStoreDatabase>): Promise<number>;

  /** Begins, on `connection`, a transaction during which no append can commit. */
  beginExclusive(connection: Kysely<PetStoreDatabase>): Promise<void>;
  /** Begins, on `connection`, a transaction that reads one consistent snapshot throughout. */
  beginSnapshot(connection: Kysely<PetStoreDatabase>): Promise<void>;
  /** Creates an empty table with the columns of `pets` (no secondary index). */
  createPetsTable(executor: Kysely<PetStoreDatabase>, name: string, options: { temporary: boolean }): Promise<void>;
  /** Inside `beginExclusive`'s transaction: replaces `pets` with `from`, indexes included. */
  swapInPets(connection: Kysely<PetStoreDatabase>, from: string): Promise<void>;
}

/** Runs `work`, rethrowing its failure as the flavour names it. */
export async function translated<T>(flavour: SqlFlavour, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw flavour.translateError(error);
  }
}
