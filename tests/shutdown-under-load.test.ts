import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openSqlitePetStore } from '../adapters/store/sqlite/sqlite-pet-store.ts';
import { verifyProjection } from './support/projection-check.ts';
import { startServiceProcess } from './support/service-process.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

const KEY = 'shutdown-key-0123456789abcdef';
const CLIENTS = 64;
const SLOW_CLIENTS = 8;
const GRACE_MS = 5000;
const ANSWERS_BEFORE_SIGNAL = 400;

interface Outcome {
  readonly requestId: string;
  readonly method: 'GET' | 'POST';
  readonly name?: string;
  status?: number;
  error?: string;
  failedAt?: number;
}

describe('SIGTERM under load', () => {
  it(`lets every request accepted before the signal finish normally with ${CLIENTS} clients, and exits 0 within the grace period`, async (t) => {
    const directory = temporaryDirectory('shutdown');
    const database = directory.file('petstore.db');
    const service = startServiceProcess({
      PETSTORE_DATABASE: database,
      PETSTORE_API_KEYS: KEY,
      PETSTORE_LOG_LEVEL: 'info',
      PETSTORE_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      // Idle kept-alive connections would hold the exit past the grace period unless shutdown closes them.
      PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '60000',
    });
    try {
      const baseUrl = await service.listening;
      const outcomes: Outcome[] = [];
      let signalledAt: number | undefined;
      let markSignalled!: () => void;
      const signalled = new Promise<void>((resolve) => (markSignalled = resolve));
      let answered = 0;
      let enoughAnswers!: () => void;
      const loadIsSteady = new Promise<void>((resolve) => (enoughAnswers = resolve));

      const send = async (outcome: Outcome, body?: string | ReadableStream<Uint8Array>) => {
        outcomes.push(outcome);
        try {
          const response = await fetch(`${baseUrl}/pets${outcome.method === 'GET' ? '?limit=5' : ''}`, {
            method: outcome.method,
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'x-request-id': outcome.requestId },
            ...(body === undefined ? {} : { body, duplex: 'half' }),
          } as RequestInit);
          await response.arrayBuffer();
          outcome.status = response.status;
          if (++answered === ANSWERS_BEFORE_SIGNAL) enoughAnswers();
        } catch (error) {
          outcome.error = String((error as { cause?: { code?: string } }).cause?.code ?? error);
          outcome.failedAt = performance.now();
        }
      };

      // A slow client sends half its body, waits for the signal, then sends the rest: in flight across SIGTERM.
      const slowClient = async (index: number) => {
        const name = `slow ${index}`;
        const [head, tail] = [JSON.stringify({ name, categoryId: 1 }).slice(0, 10), JSON.stringify({ name, categoryId: 1 }).slice(10)];
        const body = new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode(head));
            await signalled;
            controller.enqueue(new TextEncoder().encode(tail));
            controller.close();
          },
        });
        await send({ requestId: `slow-${index}`, method: 'POST', name }, body);
      };

      // A busy client alternates creates and listings until the service refuses it.
      const busyClient = async (index: number) => {
        for (let n = 0; ; n++) {
          const requestId = `busy-${index}-${n}`;
          const outcome: Outcome = n % 2 === 0 ? { requestId, method: 'POST', name: requestId } : { requestId, method: 'GET' };
          await send(outcome, outcome.method === 'POST' ? JSON.stringify({ name: requestId, categoryId: 2, status: 'available' }) : undefined);
          if (outcome.error) return;
        }
      };

      const clients = [
        ...Array.from({ length: SLOW_CLIENTS }, (_, index) => slowClient(index)),
        ...Array.from({ length: CLIENTS - SLOW_CLIENTS }, (_, index) => busyClient(index)),
      ];
      await loadIsSteady;
      signalledAt = performance.now();
      // process.kill, not child.kill: Deno reports a child it signalled as killed even when it exited 0.
      service.signal('SIGTERM');
      markSignalled();
      const exit = await service.exited;
      const exitMs = performance.now() - signalledAt;
      await Promise.all(clients);

      assert.deepEqual(exit, { code: 0, signal: null }, service.stderr());
      assert.ok(exitMs < GRACE_MS, `exited ${Math.round(exitMs)} ms after SIGTERM; the grace period is ${GRACE_MS} ms`);

      const wrongAnswers = outcomes.filter((outcome) => outcome.status !== undefined && outcome.status !== (outcome.method === 'POST' ? 201 : 200));
      assert.deepEqual(wrongAnswers, [], 'some answers were not the normal one');
      const failedEarly = outcomes.filter((outcome) => outcome.failedAt !== undefined && outcome.failedAt < signalledAt!);
      assert.deepEqual(failedEarly, [], 'requests failed before the signal');
      assert.deepEqual(outcomes.filter((outcome) => outcome.requestId.startsWith('slow-')).map((outcome) => outcome.status), Array(SLOW_CLIENTS).fill(201));

      // Every request the service took in (one log line each) reached its client with that answer, and no other.
      const logged = new Map<string, number>();
      for (const line of service.stdout().split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; requestId?: string; status?: number };
        if (entry.msg === 'request') logged.set(entry.requestId!, entry.status!);
      }
      const received = new Map(outcomes.filter((outcome) => outcome.status !== undefined).map((outcome) => [outcome.requestId, outcome.status!]));
      assert.deepEqual(logged, received);

      // Every stored pet was acknowledged, and the read model matches the log.
      const store = await openSqlitePetStore(database);
      try {
        const names = (await store.db.selectFrom('pets').select('name').execute()).map((row) => row.name).sort();
        const acknowledged = outcomes.filter((outcome) => outcome.method === 'POST' && outcome.status === 201).map((outcome) => outcome.name!).sort();
        assert.deepEqual(names, acknowledged);
        assert.deepEqual((await verifyProjection(store.db)).problems, []);
      } finally {
        await store.close();
      }
      const inFlight = outcomes.filter((outcome) => outcome.status !== undefined).length - ANSWERS_BEFORE_SIGNAL;
      t.diagnostic(`${received.size} answers (${inFlight} after the ${ANSWERS_BEFORE_SIGNAL}th, when SIGTERM was sent); ${outcomes.length - received.size} requests refused after it; exit after ${Math.round(exitMs)} ms`);
    } finally {
      service.child.kill('SIGKILL');
      directory.remove();
    }
  });
});
