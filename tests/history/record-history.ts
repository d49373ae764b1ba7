import { mkdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkHistory } from '../../tools/check-history/check.ts';
import { NotAHistory } from '../../tools/check-history/history.ts';
import type { Deployment } from './deployments.ts';
import { HISTORY_KEY } from './deployments.ts';
import { createHistoryGroup, drainGroup, groupConsumer } from './group-consumers.ts';
import { openHistoryFile } from './history-file.ts';
import { scheduleNemeses } from './nemeses.ts';
import type { ScheduledNemesis } from './nemeses.ts';
import type { Target } from './petstore-requests.ts';
import { readWholeLog, runWorkload } from './workload.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ARTIFACTS = join(ROOT, 'tests', 'artifacts');
/** A request without an answer by then is recorded as unknown (`info`): longer than a statement timeout, shorter than a run. */
export const CLIENT_TIMEOUT_MS = 5000;

export interface HistoryLine {
  readonly backend: string;
  readonly ops: number;
  readonly nemeses: readonly string[];
  readonly valid: boolean;
  readonly anomalies: Record<string, unknown>;
  /** Records the checker could not use: the recorder writes none, so any is a fault of the run. */
  readonly unusable: number;
  readonly history: string;
}

export interface RecordOptions {
  readonly seconds: number;
  readonly random: () => number;
  readonly say: (line: string) => void;
  /** Where the stream consumers connect, by default the instances themselves (a test puts a proxy between). */
  readonly streamBases?: readonly string[];
  readonly withNemeses?: boolean;
  /** The faults and when they begin, in place of the seeded schedule. */
  readonly schedule?: readonly ScheduledNemesis[];
  readonly clients?: number;
  /** Consumers of the run's consumer group (3 by default). */
  readonly groupConsumers?: number;
  /** How the history file's name begins (`history-<backend>` by default): a deliberately broken run says so in its own. */
  readonly fileLabel?: string;
}

const secondsSince = (began: number) => ((Date.now() - began) / 1000).toFixed(1);

export const targetOf = (base: string): Target => ({ base, key: HISTORY_KEY, timeoutMs: CLIENT_TIMEOUT_MS });

/**
 * Records a history of the workload and the consumer group's consumers on a deployment for `seconds`,
 * with the nemeses on the schedule it prints; drains the group and reads the whole log at the end, and
 * checks the file.
 */
export async function recordAndCheck(deployment: Deployment, options: RecordOptions): Promise<HistoryLine> {
  const { random, say, seconds } = options;
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${options.fileLabel ?? `history-${deployment.backend}`}-${new Date().toISOString().replaceAll(':', '-')}.jsonl`);
  const history = openHistoryFile(file);
  const schedule = options.schedule ?? (options.withNemeses === false ? [] : scheduleNemeses(deployment, seconds, random));
  say(`${deployment.backend}: ${deployment.instances.length} instance(s), ${seconds} s, nemeses at ${schedule.map(({ at, nemesis }) => `${at.toFixed(1)} s ${nemesis.name}`).join(', ') || 'none'}`);
  const targets = deployment.instances.map((instance) => targetOf(instance.base));
  let stopped = false;
  await createHistoryGroup({ history, targets, random });
  const began = Date.now();
  const until = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, began + ms - Date.now())));
  const workload = runWorkload({
    history, targets, pageTargets: targets, streamTargets: (options.streamBases ?? deployment.instances.map((instance) => instance.base)).map(targetOf),
    clients: options.clients ?? 20, pageConsumers: 2, streamConsumers: 2, random, stopped: () => stopped,
  });
  const groupConsumers = Array.from({ length: options.groupConsumers ?? 3 }, (_, at) => groupConsumer({ history, targets, random, stopped: () => stopped }, `group-${at}`));
  const applied: string[] = [];
  try {
    for (const { at, nemesis } of schedule) {
      await until(at * 1000);
      const start = secondsSince(began);
      say(`${deployment.backend}: ${start} s ${nemesis.name} begins`);
      const done = await nemesis.run(deployment, random);
      applied.push(nemesis.name);
      say(`${deployment.backend}: ${start} s to ${secondsSince(began)} s ${nemesis.name}: ${done}`);
    }
    await until(seconds * 1000);
  } finally {
    stopped = true;
    await Promise.all([workload, ...groupConsumers]);
  }
  await drainGroup({ history, targets, random });
  await readWholeLog(history, targets[0]!);
  history.close();
  const shown = relative(ROOT, file);
  try {
    const result = checkHistory(readFileSync(file, 'utf8'));
    for (const { record, why } of result.unusable.slice(0, 5)) say(`${deployment.backend}: record ${record} could not be used: ${why}`);
    return { backend: deployment.backend, ops: result.ops, nemeses: applied, valid: result.valid, anomalies: result.anomalies, unusable: result.unusable.length, history: shown };
  } catch (error) {
    if (!(error instanceof NotAHistory)) throw error;
    return { backend: deployment.backend, ops: history.operations, nemeses: applied, valid: false, anomalies: { 'not-a-history': [error.message] }, unusable: 0, history: shown };
  }
}
