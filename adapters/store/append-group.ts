import type { AppendResult } from '../../application/index.ts';
import { executeAppend } from './append-plan.ts';
import type { AppendRequest, AppendRows, Appended } from './append-plan.ts';
import type { PetChange } from './catalog-changes.ts';
import type { GroupTiming } from './write-observer.ts';

/** An append waiting for its group: answered only once the group has committed (or failed). */
export interface PendingAppend {
  readonly request: AppendRequest;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
  readonly observed: ((group: GroupTiming) => void) | undefined;
}

/** A group of appends inside its transaction. */
export interface GroupTransaction {
  /**
   * The rows the appends read and write. They keep an append's writes aside until its last one
   * (`insertEvents`), so that an append the plan refuses leaves nothing behind (see `GroupRows`).
   */
  readonly rows: AppendRows;
  /** True for a fault of the machine or database: it fails the whole group, not one append. */
  failsGroup(error: unknown): boolean;
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
 * append plan in the group's transaction, so that a refused append (a version conflict, an idempotency
 * key taken) is rejected alone, having written nothing. A fault of the machine is thrown, to fail the group.
 */
export async function appendAll(group: GroupTransaction, batch: readonly PendingAppend[], now: Date): Promise<GroupOutcome> {
  const answers: (() => void)[] = [];
  const changes: PetChange[] = [];
  let last = 0;
  for (const write of batch) {
    let appended: Appended;
    try {
      appended = await executeAppend(group.rows, write.request, now);
    } catch (error) {
      if (group.failsGroup(error)) throw error;
      answers.push(() => write.reject(error));
      continue;
    }
    if (appended.change) changes.push(appended.change);
    last = Math.max(last, appended.position);
    answers.push(() => write.resolve({ version: appended.version, position: appended.position }));
  }
  return { answers, changes, last };
}
