import type { PetStatus } from '../../domain/index.ts';

/** A pet whose read-model row changed, with its status before and after (`null`: none; before is `null` for a new pet). */
export interface PetChange {
  readonly id: number;
  readonly statuses: readonly (PetStatus | null)[];
}

/** Told what changed in the catalogue; `undefined` means anything may have changed. */
export type CatalogListener = (changes: readonly PetChange[] | undefined) => void;

/** What the store tells the listing cache so that it stays exact: a contract between the store and HTTP, not a use case's port. */
export interface CatalogChanges {
  /** `listener` hears of this process's commits as they commit, with the pets they changed. */
  subscribe(listener: CatalogListener): void;
  /**
   * Looks for commits the store did not report itself: other processes, or writes that went around it.
   * Where the store can look synchronously (SQLite's file), the listeners hear of any before this
   * returns; otherwise (PostgreSQL) it returns a promise, and they have heard of every commit made
   * before the call by the time it resolves.
   */
  refresh(): void | Promise<void>;
}
