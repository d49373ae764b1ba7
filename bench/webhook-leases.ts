// What idle webhook subscriptions cost everyone else: the service as `npm start` runs it over a fresh
// SQLite file, one key holding N subscriptions to a public address that no event ever reaches (no event
// is written), then the service's CPU while idle (its leases kept) and another key's creations, timed.
//   npm run bench:webhook-leases [-- <subscriptions>]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listeningBase, npmStartNodeArgs } from '../scripts/start-command.ts';

const KEY = 'bench-leases-key-0123456789';
const OTHER_KEY = 'bench-leases-other-0123456789';
const IDLE_SECONDS = 20;
const CREATIONS = 20;
const TICKS_PER_SECOND = 100; // _SC_CLK_TCK on Linux

/** User and system CPU seconds of a process so far (Linux /proc). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function main(subscriptions: number): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-bench-leases-'));
  const child = spawn(process.execPath, npmStartNodeArgs(), {
    env: {
      PATH: process.env.PATH ?? '', PORT: '0', PETSTORE_LOG_LEVEL: 'silent', PETSTORE_DATABASE: join(directory, 'petstore.db'),
      PETSTORE_API_KEYS: `${KEY},${OTHER_KEY}`, PETSTORE_RATE_LIMIT: 'off', PETSTORE_WEBHOOKS_MAX_PER_KEY: String(subscriptions + 1),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const base = await listeningBase(child);
    const create = async (key: string, index: number) => {
      const started = performance.now();
      const response = await fetch(`${base}/webhooks`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: `https://93.184.215.14/hook/${index}` }),
      });
      if (response.status !== 201) throw new Error(`POST /webhooks answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
      return performance.now() - started;
    };
    const fillStarted = performance.now();
    for (let index = 0; index < subscriptions; index++) await create(KEY, index);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const idleFrom = cpuSeconds(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idleShare = (cpuSeconds(child.pid!) - idleFrom) / IDLE_SECONDS;
    const times: number[] = [];
    for (let index = 0; index < CREATIONS; index++) {
      times.push(await create(OTHER_KEY, index));
      await fetch(`${base}/webhooks`, { headers: { authorization: `Bearer ${OTHER_KEY}` } }).then((response) => response.arrayBuffer());
    }
    times.sort((a, b) => a - b);
    process.stdout.write(
      `${subscriptions} idle subscriptions (created at ${(subscriptions / fillSeconds).toFixed(0)}/s): ` +
        `CPU while idle ${(idleShare * 100).toFixed(1)}% of a core over ${IDLE_SECONDS} s; another key's create p50 ${times[CREATIONS / 2]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms\n`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(directory, { recursive: true, force: true });
  }
}

await main(Number(process.argv[2] ?? '2000'));
