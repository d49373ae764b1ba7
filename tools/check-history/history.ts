/**
 * A history: what clients saw, one record a line, in Jepsen's shape. Each operation is an `invoke`
 * and at most one completion of the same `f` by the same process: `ok` (it happened), `fail` (it
 * certainly did not) or `info` (unknown). A process has at most one operation outstanding.
 */
export const RECORD_TYPES = ['invoke', 'ok', 'fail', 'info'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export interface HistoryRecord {
  readonly index: number;
  readonly process: string;
  readonly type: RecordType;
  readonly f: string;
  readonly time: number;
  readonly value: Record<string, unknown>;
}

/** An invoke and its completion, if any (none: the run ended first, which counts as `info`). */
export interface Operation {
  readonly f: string;
  readonly process: string;
  readonly invoke: HistoryRecord;
  readonly completion: HistoryRecord | undefined;
}

/** The outcome of an operation: `info` also when it never completed. */
export function outcomeOf(op: Operation): 'ok' | 'fail' | 'info' {
  const type = op.completion?.type;
  return type === 'ok' || type === 'fail' ? type : 'info';
}

/** The index that names an operation in a finding: its completion's, or its invoke's when it has none. */
export function indexOf(op: Operation): number {
  return (op.completion ?? op.invoke).index;
}

export class NotAHistory extends Error {}

/** One record whose value lacks what its operation needs: the checker reports it and checks the rest. */
export class UnusableRecord extends Error {
  constructor(readonly record: HistoryRecord, why: string) {
    super(why);
  }
}

/**
 * Reads JSON lines into operations, in the order of their invokes; throws `NotAHistory` with the line at
 * fault, an operation not among `operationNames` included (a typo would otherwise be read as no request at all).
 */
export function parseHistory(text: string, operationNames: readonly string[]): Operation[] {
  const operations: Operation[] = [];
  const outstanding = new Map<string, { f: string; invoke: HistoryRecord; at: number }>();
  const seenIndexes = new Set<number>();
  const lines = text.split('\n');
  lines.forEach((line, lineIndex) => {
    if (line.trim() === '') return;
    const where = `line ${lineIndex + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new NotAHistory(`${where} is not JSON`);
    }
    const record = recordOf(parsed, where);
    if (!operationNames.includes(record.f)) throw new NotAHistory(`${where}: f ${JSON.stringify(record.f)} is not an operation of a history (${operationNames.join(', ')})`);
    if (seenIndexes.has(record.index)) throw new NotAHistory(`${where}: index ${record.index} appears twice`);
    seenIndexes.add(record.index);
    const pending = outstanding.get(record.process);
    if (record.type === 'invoke') {
      if (pending) throw new NotAHistory(`${where}: process ${record.process} invokes while its operation at index ${pending.invoke.index} is outstanding`);
      const at = operations.push({ f: record.f, process: record.process, invoke: record, completion: undefined }) - 1;
      outstanding.set(record.process, { f: record.f, invoke: record, at });
      return;
    }
    if (!pending) throw new NotAHistory(`${where}: process ${record.process} completes an operation it never invoked`);
    if (pending.f !== record.f) throw new NotAHistory(`${where}: process ${record.process} completes ${record.f} but invoked ${pending.f}`);
    operations[pending.at] = { ...operations[pending.at]!, completion: record };
    outstanding.delete(record.process);
  });
  if (operations.length === 0) throw new NotAHistory('no operation');
  return operations;
}

function recordOf(parsed: unknown, where: string): HistoryRecord {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new NotAHistory(`${where} is not an object`);
  const { index, process, type, f, time, value } = parsed as Record<string, unknown>;
  if (!Number.isSafeInteger(index) || (index as number) < 0) throw new NotAHistory(`${where}: index must be a non-negative integer`);
  if (typeof process !== 'string' || process === '') throw new NotAHistory(`${where}: process must be a non-empty string`);
  if (!(RECORD_TYPES as readonly unknown[]).includes(type)) throw new NotAHistory(`${where}: type must be one of ${RECORD_TYPES.join(', ')}`);
  if (typeof f !== 'string' || f === '') throw new NotAHistory(`${where}: f must be a non-empty string`);
  if (typeof time !== 'number' || !Number.isFinite(time)) throw new NotAHistory(`${where}: time must be a number`);
  // A completion may say nothing (null): a request that got no answer.
  if (value === null && type !== 'invoke') return { index: index as number, process, type: type as RecordType, f, time, value: {} };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new NotAHistory(`${where}: value must be an object${type === 'invoke' ? '' : ' or null'}`);
  return { index: index as number, process, type: type as RecordType, f, time, value: value as Record<string, unknown> };
}
