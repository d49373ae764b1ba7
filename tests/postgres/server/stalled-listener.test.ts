import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { addPet } from '../../../application/index.ts';
import { openPostgresPetStore } from '../../../adapters/store/postgres/postgres-pet-store.ts';
import type { SqlPetStore } from '../../../adapters/store/sql-pet-store.ts';
import { openEventStream } from '../../support/event-stream-reader.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { waitFor } from '../../support/wait-for.ts';
import type { TestDatabase } from '../../support/postgres.ts';
import { startTestService, TEST_API_KEY } from '../../support/test-service.ts';
import type { TestService } from '../../support/test-service.ts';

const TIMEOUT_MS = 1500;
/** The promise: a listing on the stalled instance answered within this, 200 or 503. */
const LISTING_BOUND_MS = 2000;
/** Bounds on a hang, not speed targets: the listener is given up past the timeout and opened again a second later. */
const RECOVERY_BOUND_MS = TIMEOUT_MS + 8000;

describe('a stalled log listener (its PostgreSQL backend stopped)', () => {
  let database: TestDatabase;
  let api: TestService;
  let other: SqlPetStore;
  let observer: pg.Client;
  before(async () => {
    database = await createTestDatabase();
    api = await startTestService({ PETSTORE_DATABASE: database.url, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
    // Another instance on the same database: its commits reach the service only through the listener.
    other = await openPostgresPetStore({ url: database.url, poolSize: 2, statementTimeoutMs: 10_000 }, { migrate: false });
    observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
  });
  after(async () => {
    await observer?.end();
    await other?.close();
    await api?.stop();
    await database?.drop();
  });

  const listenerPids = async () => (await observer.query<{ pid: number }>(
    "select pid from pg_stat_activity where application_name = 'petstore-log-listener' and datname = current_database()",
  )).rows.map((row) => row.pid);

  const timed = async (path: string, headers: Record<string, string> = {}) => {
    const asked = performance.now();
    const response = await api.request(path, { headers, signal: AbortSignal.timeout(20_000) });
    return { response, tookMs: performance.now() - asked };
  };

  it('answers listings within the bound, is not ready while stalled, listens again on a new connection, and other instances\' events flow again', { timeout: 60_000 }, async (t) => {
    await api.createPet({ name: 'Before', categoryId: 1 });
    assert.equal((await api.request('/v1/pets')).status, 200);
    const [stalled] = await waitFor(listenerPids, (pids) => pids.length === 1, 5000);
    assert.ok(stalled !== undefined, 'the service listens for commits');
    const stream = await openEventStream(`${api.baseUrl}/events?after=1`, { authorization: `Bearer ${TEST_API_KEY}` });
    process.kill(stalled, 'SIGSTOP');
    const stopped = performance.now();
    const listingMs: number[] = [];
    try {
      const written = await addPet(other, { name: 'Elsewhere', categoryId: 1 });
      const position = (await other.eventLog.readLog({ after: 0, limit: 10 })).find((stored) => stored.event.type === 'PetAdded' && stored.event.data.id === written.id)!.position;
      for (const headers of [{}, {}, { 'petstore-min-position': String(position) }, {}, { 'petstore-min-position': String(position) }]) {
        const { response, tookMs } = await timed('/v1/pets', headers);
        listingMs.push(Math.round(tookMs));
        assert.ok([200, 503].includes(response.status), `a listing answered ${response.status}`);
        assert.ok(tookMs < LISTING_BOUND_MS, `a listing (${JSON.stringify(headers)}) took ${Math.round(tookMs)} ms while the listener was stalled`);
        if (response.status === 200) {
          const names = ((await response.json()) as { name: string }[]).map((pet) => pet.name);
          assert.ok(names.includes('Elsewhere'), `a listing after the other instance's write misses it: ${names.join(', ')}`);
        } else {
          await response.body?.cancel();
        }
      }
      const notReady = await waitFor(() => timed('/readyz'), ({ response }) => response.status === 503, 3000);
      const notReadyAt = Math.round(performance.now() - stopped);
      assert.equal(notReady.response.status, 503, 'not ready while the listener is stalled');
      assert.match(((await notReady.response.json()) as { message: string }).message, /other instances' commits are not followed/);
      assert.ok(notReady.tookMs < 1000, `readiness answered in ${Math.round(notReady.tookMs)} ms`);

      // The old backend is still stopped: only a new listening connection can bring the event.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const event = await Promise.race([
        stream.nextEvent(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('the other instance\'s event never reached the stream while the old listener was stopped')), RECOVERY_BOUND_MS);
        }),
      ]).finally(() => clearTimeout(timer));
      assert.equal(event.id, String(position));
      t.diagnostic(`listings while stalled: ${listingMs.join(', ')} ms; not ready ${notReadyAt} ms after the stop; the other instance's event on the stream ${Math.round(performance.now() - stopped)} ms after the stop`);
      const pids = await waitFor(listenerPids, (found) => found.some((pid) => pid !== stalled), RECOVERY_BOUND_MS);
      assert.ok(pids.some((pid) => pid !== stalled), 'a new listening connection');
      assert.equal((await waitFor(() => api.request('/readyz'), (response) => response.status === 200, RECOVERY_BOUND_MS)).status, 200, 'ready again');
      t.diagnostic(`ready again ${Math.round(performance.now() - stopped)} ms after the stop, the old backend still stopped`);
      const later = await addPet(other, { name: 'Later', categoryId: 1 });
      const next = await stream.nextEvent();
      assert.equal(JSON.parse(next.data).data.id, later.id, 'and the next one too');
    } finally {
      stream.close();
      process.kill(stalled, 'SIGCONT');
    }
  });
});

describe('closing an instance whose log listener is stalled', () => {
  it('closes within a second or two, leaving the stopped backend to end once it runs', { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    const api = await startTestService({ PETSTORE_DATABASE: database.url, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
    let stalled: number | undefined;
    try {
      [stalled] = await waitFor(async () => (await observer.query<{ pid: number }>(
        "select pid from pg_stat_activity where application_name = 'petstore-log-listener' and datname = current_database()",
      )).rows.map((row) => row.pid), (pids) => pids.length === 1, 5000);
      assert.ok(stalled !== undefined, 'the service listens for commits');
      process.kill(stalled, 'SIGSTOP');
      const asked = performance.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const closed = await Promise.race([
        api.stop().then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 20_000))),
      ]).finally(() => clearTimeout(timer));
      const tookMs = performance.now() - asked;
      assert.ok(closed, 'the service closed');
      assert.ok(tookMs < 2500, `closing took ${Math.round(tookMs)} ms`);
    } finally {
      if (stalled !== undefined) process.kill(stalled, 'SIGCONT');
      await observer.end();
      await database.drop();
    }
  });
});
