import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createReadPositions } from '../../adapters/http/pipeline/read-positions.ts';
import type { LogQuery, StoredEvent } from '../../application/index.ts';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

/** Writes say the log position of their commit; reads asked for "at least this new" answer from a state that includes it. */

let api: TestService;

before(async () => {
  api = await startTestService();
});

after(async () => {
  await api.stop();
});

const positionOf = (response: Response) => Number(response.headers.get('petstore-position'));
const atLeast = (position: number | string) => ({ headers: { 'petstore-min-position': String(position) } });

describe('the log position of a write', () => {
  it('is on every creation, growing with each', async () => {
    const first = await api.createPet({ name: 'Rex', categoryId: 1 });
    const second = await api.createPet({ name: 'Tom', categoryId: 1 });
    assert.equal(first.status, 201);
    assert.ok(positionOf(first) > 0, `got ${first.headers.get('petstore-position')}`);
    assert.ok(positionOf(second) > positionOf(first));
  });

  it('is on a status change; a change to the current status answers the position of the last change', async () => {
    const created = await api.createPet({ name: 'Max', categoryId: 1, status: 'available' });
    const { id } = (await created.json()) as { id: number };
    const patch = () => api.request(`/v1/pets/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"status":"pending"}' });
    const changed = await patch();
    assert.equal(changed.status, 200);
    assert.ok(positionOf(changed) > positionOf(created));
    assert.equal(positionOf(await patch()), positionOf(changed));
  });

  it('of a replayed creation (the same Idempotency-Key) is the position of the creation', async () => {
    const create = () =>
      api.request('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'position-replay' }, body: '{"name":"Kit","categoryId":2}' });
    const first = await create();
    await api.createPet({ name: 'Later', categoryId: 1 });
    const again = await create();
    assert.equal(again.status, 201);
    assert.equal(positionOf(again), positionOf(first));
  });
});

describe('a read asking for at least a position', () => {
  it('answers a listing and a pet that include the write whose position it names', async () => {
    const created = await api.createPet({ name: 'Fresh', categoryId: 3 });
    const { id } = (await created.json()) as { id: number };
    const listing = await api.request(`/v1/pets?after=${id - 1}&limit=1`, atLeast(positionOf(created)));
    assert.deepEqual(((await listing.json()) as { id: number }[]).map((pet) => pet.id), [id]);
    assert.equal((await api.request(`/v1/pets/${id}`, atLeast(positionOf(created)))).status, 200);
  });

  it('refuses a position that is not plain decimal digits (a leading zero included) with 400 invalid_header, on both reads', async () => {
    for (const value of ['-1', '1.5', 'x', '', '99999999999999999', '007']) {
      for (const path of ['/v1/pets', '/v1/pets/1']) {
        const answer = await api.request(path, atLeast(value));
        assert.equal(answer.status, 400, `${path} ${JSON.stringify(value)}`);
        assert.equal((await readError(answer)).code, 'invalid_header');
      }
    }
  });

  it('refuses a position past the end of the log with 400 invalid_header naming the end, on both reads', async () => {
    const end = positionOf(await api.createPet({ name: 'Last', categoryId: 1 }));
    for (const path of ['/v1/pets?limit=3', '/v1/pets/1']) {
      const answer = await api.request(path, atLeast(end + 1_000_000));
      assert.equal(answer.status, 400, path);
      const { code, message } = await readError(answer);
      assert.equal(code, 'invalid_header');
      assert.match(message, new RegExp(`past the end of the log, position ${end}\\b`));
    }
  });
});

describe('what an instance knows its reads include', () => {
  /** A log whose last position is `head`, counting its look-ups. */
  function logAt(head: number) {
    const log = {
      lookUps: 0,
      head,
      async readLog({ after }: LogQuery): Promise<StoredEvent[]> {
        log.lookUps++;
        return log.head > after ? [{ position: after + 1 } as StoredEvent] : [];
      },
    };
    return log;
  }

  it('looks a newer position up once for every read that asks for it meanwhile, and then not again', async () => {
    const log = logAt(7);
    let refreshed = 0;
    const positions = createReadPositions({ log, refresh: () => refreshed++ });
    await Promise.all(Array.from({ length: 10 }, () => positions.reach(5)));
    assert.equal(log.lookUps, 1);
    assert.equal(refreshed, 1, 'the caches take in what is visible after the look-up');
    assert.equal(positions.reached, 5);
    await positions.reach(4);
    assert.equal(log.lookUps, 1);
  });

  it('takes its own commits as reached without a look-up', async () => {
    const log = logAt(3);
    const positions = createReadPositions({ log, refresh: () => {} });
    positions.observe(3);
    await positions.reach(3);
    assert.equal(log.lookUps, 0);
  });

  it('answers 503 after a bounded wait for a position committed but not yet visible to its reads', async () => {
    const log = logAt(4);
    const positions = createReadPositions({ log, logEnd: async () => 9, refresh: () => {}, waitMs: 50 });
    await assert.rejects(positions.reach(9), (error: { status?: number; headers?: Record<string, string> }) => error.status === 503 && error.headers?.['Retry-After'] === '1');
    assert.ok(log.lookUps > 1, 'it looked again while it waited');
  });

  it('refuses a position past the log\'s end at once, and waits as before when the end cannot be read', async () => {
    const log = logAt(4);
    const positions = createReadPositions({ log, logEnd: async () => 4, refresh: () => {}, waitMs: 50 });
    await assert.rejects(positions.reach(5), (error: { status?: number; message?: string }) => error.status === 400 && /position 4\b/.test(error.message ?? ''));
    assert.equal(log.lookUps, 1);
    const unreadable = createReadPositions({ log, logEnd: () => Promise.reject(new Error('database lost')), refresh: () => {}, waitMs: 50 });
    await assert.rejects(unreadable.reach(5), (error: { status?: number }) => error.status === 503);
  });

  it('waits for a position the log reaches meanwhile, and gives up with 503 on one it never reaches', async () => {
    const log = logAt(1);
    const positions = createReadPositions({ log, refresh: () => {}, waitMs: 200 });
    const waiting = positions.reach(2);
    setTimeout(() => (log.head = 2), 20);
    await waiting;
    await assert.rejects(positions.reach(9), (error: { status?: number; headers?: Record<string, string> }) => error.status === 503 && error.headers?.['Retry-After'] === '1');
  });
});
