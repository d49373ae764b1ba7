import type { CheckResult } from './check.ts';

/** A few lines for a person: the verdict, each anomaly with how often and its first operations, the records set aside. */
export function summary(file: string, result: CheckResult): string {
  const lines = [`${file}: ${result.valid ? 'valid' : 'NOT VALID'}, ${result.ops.toLocaleString('en')} operations checked`];
  for (const [name, findings] of Object.entries(result.anomalies)) {
    lines.push(`  ${name}: ${findings.length} (first: operations ${findings[0]!.ops.join(', ')}: ${findings[0]!.why})`);
  }
  if (result.unusable.length > 0) {
    lines.push(`  ${result.unusable.length} record(s) could not be used (first: record ${result.unusable[0]!.record}: ${result.unusable[0]!.why})`);
  }
  return lines.join('\n');
}
