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
   * Looks (synchronously, cheaply) for commits the store did not report itself: other processes, or
   * writes that went around it. When there are any, the listeners hear `undefined` before this returns.
   */
  refresh(): void;
}
