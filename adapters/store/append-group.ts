import type { AppendResult } from '../../application/index.ts';
import { executeAppend } from './append-plan.ts';
import type { AppendRequest, AppendRows, Appended } from './append-plan.ts';
import type { PetChange } from './catalog-changes.ts';
import type { CommittedGroup } from './write-observer.ts';

type Awaitable<T> = T | Promise<T>;

/** An append waiting for its group: answered only once the group has committed (or failed). */
export interface PendingAppend {
  readonly request: AppendRequest;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
  readonly observed: ((group: CommittedGroup) => void) | undefined;
}

/** What a backend does for a group of appends inside its transaction, besides the rows of each append. */
export interface GroupTransaction {
  readonly rows: AppendRows;
  /**
   * A savepoint around each append, where they are cheap (SQLite). Without them, an append whose failure
   * left the transaction unusable fails the group as `GroupAppendFailed`, and the backend runs the group
   * again without it: a round trip an append saved, for a rare failure paid twice.
   */
  readonly savepoints?: { savepoint(): Awaitable<void>; release(): Awaitable<void>; rollbackTo(): Awaitable<void> };
  /** Without savepoints: true when an append's failure wrote nothing and left the transaction usable (a rule of the plan refused it). */
  leftUsable?(error: unknown): boolean;
  /** True for a fault of the machine or database: it fails the whole group, not one append. */
  failsGroup(error: unknown): boolean;
}

/** An append's failure that left the group's transaction unusable: the backend rolls back and runs the others again. */
export class GroupAppendFailed extends Error {
  constructor(readonly write: PendingAppend, readonly failure: unknown) {
    super('one append of the group failed and took its transaction with it');
  }
}

/** What a group did: each append's answer (to give once committed), the pets it changed, its last position. */
export interface GroupOutcome {
  readonly answers: (() => void)[];
  readonly changes: PetChange[];
  /** The last position appended, 0 when no append of the group appended. */
  readonly last: number;
}

/**
 * Group commit's core, for every backend that batches: the appends of one group, each executing the
 * append plan in the group's transaction, so that a failed append (a version conflict, an idempotency
 * key taken) is rejected alone (rolled back to its savepoint, or see `GroupTransaction.savepoints`). A
 * fault of the machine (or one that leaves no savepoint to roll back to) is thrown, to fail the group.
 */
export async function appendAll(group: GroupTransaction, batch: readonly PendingAppend[], now: Date): Promise<GroupOutcome> {
  const answers: (() => void)[] = [];
  const changes: PetChange[] = [];
  let last = 0;
  for (const write of batch) {
    await group.savepoints?.savepoint();
    let appended: Appended;
    try {
      appended = await executeAppend(group.rows, write.request, now);
    } catch (error) {
      if (group.failsGroup(error)) throw error;
      if (group.savepoints) {
        try {
          await group.savepoints.rollbackTo();
        } catch {
          throw error;
        }
      } else if (!group.leftUsable?.(error)) {
        throw new GroupAppendFailed(write, error);
      }
      answers.push(() => write.reject(error));
      continue;
    }
    await group.savepoints?.release();
    if (appended.change) changes.push(appended.change);
    last = Math.max(last, appended.position);
    answers.push(() => write.resolve({ version: appended.version, position: appended.position }));
  }
  return { answers, changes, last };
}
