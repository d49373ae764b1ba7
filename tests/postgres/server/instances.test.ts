import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrations } from '../../../adapters/store/migrations.ts';
import { NODE_TS_ARGS } from '../../support/processes.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';
import { readError } from '../../support/test-service.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));
const KEY = 'instances-key-0123456789';

async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe('several instances on one PostgreSQL database', () => {
  it('three processes starting together on an empty database migrate once, and each can write', async () => {
    const database = await createTestDatabase();
    const child = join(root, 'tests', 'support', 'fixtures', 'open-and-add-pet.ts');
    try {
      const outputs = await Promise.all([1, 2, 3].map(() => run(process.execPath, [...NODE_TS_ARGS, child, database.url])));
      const ids = outputs.map(({ stdout }) => (JSON.parse(stdout) as { id: number }).id);
      assert.deepEqual(ids.sort(), [1, 2, 3]);
      const applied = await query<{ name: string }>(database.url, 'select name from kysely_migration order by name');
      assert.deepEqual(applied.map((row) => row.name), Object.keys(migrations).sort());
    } finally {
      await database.drop();
    }
  });

  it('three services take 600 concurrent creations and status changes; every 201 is readable from every instance', async () => {
    const database = await createTestDatabase();
    const services: ServiceProcess[] = [];
    try {
      // Started together on the empty database: they race to migrate too. A generous timeout: this
      // test is about what is kept, and a busy test machine may queue requests for seconds.
      // All 1,200 requests come from this one address, up to 400 at a time to one instance: more than the per-client cap.
      // Idle connections are kept a minute: a POST or PATCH sent on a connection the server is closing as idle
      // fails without a retry (not idempotent), and a busy machine can delay the client past its keep-alive margin.
      const environment = {
        PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: KEY, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: '60000', PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '1000',
        PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '60000',
      };
      for (let index = 0; index < 3; index++) services.push(startServiceProcess(environment));
      const bases = await Promise.all(services.map((service) => service.listening));
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

      interface Outcome { index: number; created: number; id?: number; status?: string; changed?: number; error?: string }
      const outcomes = await Promise.all(Array.from({ length: 600 }, async (_, index): Promise<Outcome> => {
        const created = await fetch(`${bases[index % 3]}/pets`, {
          method: 'POST', headers, body: JSON.stringify({ name: `pet ${index}`, categoryId: (index % 7) + 1, status: 'available' }),
        });
        if (created.status !== 201) return { index, created: created.status, error: (await readError(created)).message };
        const pet = (await created.json()) as { id: number };
        const status = index % 2 === 0 ? 'pending' : 'sold';
        // The change goes to another instance than the one that created the pet.
        const changed = await fetch(`${bases[(index + 1) % 3]}/pets/${pet.id}`, { method: 'PATCH', headers, body: JSON.stringify({ status }) });
        return { index, created: 201, id: pet.id, status, changed: changed.status, ...(changed.status === 200 ? {} : { error: (await readError(changed)).message }) };
      }));

      const refused = outcomes.filter((outcome) => outcome.created !== 201 || outcome.changed !== 200);
      assert.deepEqual(refused, [], 'every creation answered 201 and every change 200');
      const ids = outcomes.map((outcome) => outcome.id!);
      assert.equal(new Set(ids).size, 600, 'ids are unique');

      for (const base of bases) {
        const listed = new Map<number, string>();
        for (let url: string | undefined = `${base}/pets?limit=100`; url; ) {
          const page = await fetch(url, { headers });
          assert.equal(page.status, 200);
          for (const pet of (await page.json()) as Array<{ id: number; status: string }>) listed.set(pet.id, pet.status);
          url = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
        }
        for (const outcome of outcomes) assert.equal(listed.get(outcome.id!), outcome.status, `pet ${outcome.id} as changed, listed by ${base}`);
        for (let start = 0; start < outcomes.length; start += 100) {
          const reads = await Promise.all(outcomes.slice(start, start + 100).map((outcome) => fetch(`${base}/pets/${outcome.id}`, { headers })));
          assert.deepEqual(reads.map((read) => read.status), reads.map(() => 200), `every pet is readable from ${base}`);
          await Promise.all(reads.map((read) => read.arrayBuffer()));
        }
      }

      const [events] = await query<{ n: number }>(database.url, 'select count(*)::int as n from events');
      assert.equal(events!.n, 1200);
      const petstore = (...args: string[]) => run(process.execPath, [join(root, 'scripts', 'petstore.mjs'), ...args], {
        env: { ...process.env, PETSTORE_DATABASE: database.url },
      });
      assert.match((await petstore('projection', 'verify')).stdout, /the read model matches the log/);
      assert.match((await petstore('projection', 'rebuild')).stdout, /rebuilt the read model: 600 rows from 1200 events/);
      assert.match((await petstore('projection', 'verify')).stdout, /the read model matches the log/);
      assert.match((await petstore('migrate')).stdout, /up to date/);
    } finally {
      for (const service of services) service.cleanup();
      await database.drop();
    }
  });
});
