import { CHECKS } from './checks/index.ts';
import { buildModel } from './model.ts';
import type { Finding, Unusable } from './model.ts';

export interface CheckResult {
  readonly valid: boolean;
  readonly ops: number;
  readonly anomalies: Record<string, Omit<Finding, 'anomaly'>[]>;
  /** Records the checker could not use, and why; the rest was checked. */
  readonly unusable: readonly Unusable[];
}

/** Checks a history's text; throws `NotAHistory` when it is not one. */
export function checkHistory(text: string): CheckResult {
  const model = buildModel(text);
  const anomalies: CheckResult['anomalies'] = {};
  for (const check of CHECKS) {
    for (const { anomaly, ...found } of check(model)) (anomalies[anomaly] ??= []).push(found);
  }
  return { valid: Object.keys(anomalies).length === 0, ops: model.operations.length, anomalies, unusable: model.unusable };
}
