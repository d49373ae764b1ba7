// `npm run test:history`: the workload with its nemeses on SQLite (one instance) and on PostgreSQL
// (three instances on one throwaway cluster), HISTORY_SECONDS each (default 60); each history is
// checked, and one JSON line a backend ends the run. Exits 1 when a history is not valid or holds a
// record the checker could not use.
// HISTORY_SEED replays the schedule and the clients' choices (not the interleaving); HISTORY_BACKENDS
// (`sqlite,postgres`) runs some only.
import { seededRandom, seedFrom } from '../support/seeded-random.ts';
import { postgresDeployment, sqliteDeployment } from './deployments.ts';
import type { Deployment } from './deployments.ts';
import { recordAndCheck } from './record-history.ts';
import type { HistoryLine } from './record-history.ts';

const SECONDS = Number(process.env.HISTORY_SECONDS ?? 60);
const SEED = seedFrom('HISTORY_SEED');
const BACKENDS = (process.env.HISTORY_BACKENDS ?? 'sqlite,postgres').split(',');
const DEPLOY: Record<string, () => Promise<Deployment>> = { sqlite: sqliteDeployment, postgres: postgresDeployment };

const say = (line: string) => process.stderr.write(`history: ${line}\n`);

async function main(): Promise<number> {
  if (!Number.isFinite(SECONDS) || SECONDS < 5) throw new Error(`HISTORY_SECONDS must be a number of seconds, at least 5; got ${process.env.HISTORY_SECONDS}`);
  const unknown = BACKENDS.filter((backend) => !(backend in DEPLOY));
  if (unknown.length > 0) throw new Error(`HISTORY_BACKENDS names ${unknown.join(', ')}: only sqlite and postgres`);
  say(`seed ${SEED} (HISTORY_SEED=${SEED} replays the schedule and the clients' choices)`);
  const random = seededRandom(SEED);
  const lines: HistoryLine[] = [];
  for (const backend of BACKENDS) {
    const started = Date.now();
    const deployment = await DEPLOY[backend]!();
    const cleanUp = () => void deployment.close().finally(() => process.exit(130));
    process.once('SIGINT', cleanUp);
    process.once('SIGTERM', cleanUp);
    try {
      lines.push(await recordAndCheck(deployment, { seconds: SECONDS, random, say }));
    } catch (error) {
      // A fault the service did not come back from (an instance that never listens again) fails the run, and the other backend still runs.
      say(`${backend}: the run failed: ${(error as Error).stack ?? String(error)}`);
      lines.push({ backend, ops: 0, nemeses: [], valid: false, anomalies: { 'run-failed': [(error as Error).message] }, unusable: 0, history: '' });
    } finally {
      process.off('SIGINT', cleanUp);
      process.off('SIGTERM', cleanUp);
      await deployment.close();
    }
    say(`${backend}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  for (const line of lines) console.log(JSON.stringify(line));
  return lines.every((line) => line.valid && line.unusable === 0) ? 0 : 1;
}

process.exitCode = await main();
