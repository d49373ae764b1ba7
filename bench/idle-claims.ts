// How much of a core waiting claims cost with no writes: 100 claims waiting in 10 groups, the service's CPU
// read from /proc over 20 s (Linux). `node --import tsx bench/idle-claims.ts [claims] [groups] [seconds]`
import { readFileSync } from 'node:fs';
import { startServiceProcess } from '../tests/support/service-process.ts';

const [claims = 100, groups = 10, seconds = 20] = process.argv.slice(2).map(Number);
const key = 'idle-claims-key-0123456789';
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

const service = startServiceProcess({ PETSTORE_API_KEYS: key });
try {
  const base = await service.listening;
  for (let index = 0; index < groups; index++) {
    await fetch(`${base}/consumer-groups/idle-${index}`, { method: 'PUT', headers, body: JSON.stringify({ start: 'end' }) });
  }
  const stop = new AbortController();
  const waiting: Promise<unknown>[] = [];
  const claimFor = (index: number): Promise<unknown> =>
    fetch(`${base}/consumer-groups/idle-${index % groups}/claims`, { method: 'POST', headers, body: JSON.stringify({ consumer: `c${index}`, waitMs: 30_000 }), signal: stop.signal })
      .then(async (response) => {
        await response.text();
        if (!stop.signal.aborted) return claimFor(index);
        return undefined;
      }, () => undefined);
  for (let index = 0; index < claims; index++) waiting.push(claimFor(index));
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const pid = service.child.pid!;
  const before = cpuSeconds(pid);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const used = cpuSeconds(pid) - before;
  const elapsed = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ claims, groups, seconds: Number(elapsed.toFixed(1)), cpuSeconds: used, shareOfACore: Number((used / elapsed).toFixed(4)) }));
  stop.abort();
  await Promise.all(waiting);
} finally {
  service.cleanup();
}
