import { groupBy } from './group-by.ts';
import { NotAHistory, outcomeOf, parseHistory } from './history.ts';
import type { Operation } from './history.ts';
import { readPetLog } from './pet-log.ts';
import type { PetLog } from './pet-log.ts';

/** One parsed history, as every check reads it. */
export interface HistoryModel {
  readonly operations: readonly Operation[];
  /** The operations of each `f`, in the order of their invokes. */
  of(f: string): readonly Operation[];
  /** The final read of the whole log. */
  readonly logOp: Operation;
  readonly log: PetLog;
}

/** One anomaly found: its name, the operations that show it (by index) and why. */
export interface Finding {
  readonly anomaly: string;
  readonly ops: readonly number[];
  readonly positions?: readonly number[];
  readonly why: string;
}

/** A check reads the model and names what it finds; adding a check is adding one of these to `checks/index.ts`. */
export type Check = (model: HistoryModel) => Finding[];

export function buildModel(text: string): HistoryModel {
  const operations = parseHistory(text);
  const byF = groupBy(operations, (op) => op.f);
  const logs = (byF.get('log') ?? []).filter((op) => outcomeOf(op) === 'ok');
  if (logs.length !== 1) throw new NotAHistory(`a history ends with one completed read of the whole log (f "log", ok); it has ${logs.length}`);
  const logOp = logs[0]!;
  return { operations, of: (f) => byF.get(f) ?? [], logOp, log: readPetLog(logOp.completion!.value.events) };
}
