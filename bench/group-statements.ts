// Where a drained group's SQLite statements spend their time, in process: the bench's seeded log (4,000
// pets, seeded on first use), a fresh group drained by 4 consumers claiming up to 100 events,
// each claim carrying the last batch's acks; every statement timed by its text (COMMIT includes its fsync).
//   node --import tsx bench/group-statements.ts
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const spent = new Map<string, { n: number; us: number }>();
const proto = (Database as unknown as { prototype: { prepare: (sql: string) => Record<string, (...a: unknown[]) => unknown> } }).prototype;
const prepare = proto.prepare;
proto.prepare = function (this: unknown, text: string) {
  const statement = prepare.call(this, text);
  const key = text.replace(/\?(, \?)+/g, '?…').replace(/\(\?…\)(, \(\?…\))+/g, '(…)…').slice(0, 150);
  for (const method of ['all', 'run', 'get', 'iterate']) {
    const original = statement[method]!.bind(statement);
    statement[method] = (...args: unknown[]) => {
      const start = process.hrtime.bigint();
      try { return original(...args); } finally {
        const entry = spent.get(key) ?? { n: 0, us: 0 };
        entry.n++; entry.us += Number(process.hrtime.bigint() - start) / 1000;
        spent.set(key, entry);
      }
    };
  }
  return statement;
};
const { openSqlitePetStore } = await import('../adapters/store/sqlite/sqlite-pet-store.ts');
const { createSqlConsumerGroups } = await import('../adapters/store/tables/consumer-groups.ts');
const { createClaimWaits } = await import('../application/index.ts');
const { seededCopy } = await import('./seed.ts');
const file = await seededCopy(4000, join(mkdtempSync(join(tmpdir(), 'probe-')), 'p.db'));
const store = await openSqlitePetStore(file);
const groups = createSqlConsumerGroups(store);
const waits = createClaimWaits({ consumerGroups: groups, eventLog: store.eventLog, clock: store.clock, commits: store.commits }, { recheckMs: 1000 });
const total = await store.eventLog.end();
await groups.create('k', 'g', { ackTimeoutMs: 30_000, maxDeliveries: 5, start: 'beginning' }, 0, new Date(), 10);
spent.clear();
let acked = 0, claims = 0;
const cpu = process.cpuUsage();
const started = performance.now();
await Promise.all(Array.from({ length: 4 }, async (_, index) => {
  let leases: string[] = [];
  while (acked + leases.length < total) {
    const answer = await waits.claim('k', 'g', `c${index}`, 100, { waitMs: 100, ...(leases.length ? { acks: leases } : {}) });
    claims++;
    if (answer && 'acked' in answer && answer.acked) acked += answer.acked.done.length;
    leases = answer && 'claims' in answer ? answer.claims.map((claim) => claim.lease) : [];
  }
  if (leases.length) acked += (await groups.group('k', 'g').ack(leases, new Date()))!.done.length;
}));
const used = process.cpuUsage(cpu);
console.log(`${total} events, ${acked} acked, ${claims} claims, ${((performance.now() - started)).toFixed(0)} ms, ${((used.user + used.system) / total).toFixed(1)} µs CPU an event in process`);
let sum = 0; for (const e of spent.values()) sum += e.us;
console.log(`statements: ${(sum / total).toFixed(1)} µs an event`);
for (const [k, e] of [...spent].sort((a, b) => b[1].us - a[1].us).slice(0, 22)) console.log(`${(e.us / total).toFixed(2).padStart(6)} µs an event  n=${String(e.n).padStart(4)}  ${(e.us / e.n).toFixed(0).padStart(6)} µs each  ${k}`);
await store.close();
