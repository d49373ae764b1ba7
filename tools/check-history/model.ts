import { groupBy } from './group-by.ts';
import { NotAHistory, outcomeOf, parseHistory, UnusableRecord } from './history.ts';
import type { Operation } from './history.ts';
import { OPERATION_VIEWS } from './operations.ts';
import { ORDER_VIEWS } from './order-operations.ts';
import { readStoreLog } from './store-log.ts';
import type { StoreLog } from './store-log.ts';
import { readPetLog } from './pet-log.ts';
import type { PetLog } from './pet-log.ts';

/** One parsed history, as every check reads it. */
export interface HistoryModel {
  readonly operations: readonly Operation[];
  /** The records the checker could not use, and what it did with their operations instead. */
  readonly unusable: readonly Unusable[];
  /** The operations of each `f`, in the order of their invokes. */
  of(f: string): readonly Operation[];
  /** The final read of the whole log. */
  readonly logOp: Operation;
  readonly log: PetLog;
  /** The store orders of the same log. */
  readonly store: StoreLog;
}

const VIEWS = { ...OPERATION_VIEWS, ...ORDER_VIEWS };

/** One anomaly found: its name, the operations that show it (by index) and why. */
export interface Finding {
  readonly anomaly: string;
  readonly ops: readonly number[];
  readonly positions?: readonly number[];
  readonly why: string;
}

/** A record whose value lacks what its operation needs: `record` is its index. */
export interface Unusable {
  readonly record: number;
  readonly f: string;
  readonly why: string;
}

/** A check reads the model and names what it finds; adding a check is adding one of these to `checks/index.ts`. */
export type Check = (model: HistoryModel) => Finding[];

export function buildModel(text: string): HistoryModel {
  const unusable: Unusable[] = [];
  const operations = parseHistory(text, Object.keys(VIEWS)).flatMap((op) => usable(op, unusable));
  const byF = groupBy(operations, (op) => op.f);
  const logs = (byF.get('log') ?? []).filter((op) => outcomeOf(op) === 'ok');
  if (logs.length !== 1) throw new NotAHistory(`a history ends with one completed read of the whole log (f "log", ok); it has ${logs.length}`);
  const logOp = logs[0]!;
  const served = logOp.completion!.value.events;
  return { operations, unusable, of: (f) => byF.get(f) ?? [], logOp, log: readPetLog(served), store: readStoreLog(Array.isArray(served) ? served : []) };
}

/**
 * The operation as the checks may read it: an answer its view cannot read counts as unknown (`info`),
 * as a client that could not read it knows no more; a request it cannot read is left out. Each is reported.
 */
function usable(op: Operation, unusable: Unusable[]): Operation[] {
  const answer = unreadable(op);
  if (answer === undefined) return [op];
  const report = (problem: UnusableRecord, then: string) =>
    unusable.push({ record: problem.record.index, f: op.f, why: `${op.f} ${problem.record.type}: ${problem.message}; ${then}` });
  if (answer.record.type !== 'invoke') {
    const unknown: Operation = { ...op, completion: { ...answer.record, type: 'info', value: {} } };
    const request = unreadable(unknown);
    report(answer, request === undefined ? 'its outcome is counted as unknown (info)' : 'the operation is left out');
    if (request === undefined) return [unknown];
    report(request, 'the operation is left out');
    return [];
  }
  report(answer, 'the operation is left out');
  return [];
}

function unreadable(op: Operation): UnusableRecord | undefined {
  try {
    VIEWS[op.f]!(op);
    return undefined;
  } catch (error) {
    if (error instanceof UnusableRecord) return error;
    throw error;
  }
}
