import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { addPet } from '../../application/index.ts';
import { openSqlitePetStore } from '../../adapters/store/sqlite/sqlite-pet-store.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';

/**
 * `npm run test:feed-load` (in CI): the event feed with a consumer that reads one byte a second while
 * EVENTS pets are created in the service's SQLite file by another process (this one, through the store:
 * many times faster than over HTTP, and the streams learn of them as of any other process's commits),
 * the service as `npm start` runs it. The log is the buffer: the
 * service's resident memory stays within RSS_BOUND_MB of where it stood before the writes, and a second
 * stream, read as fast as it comes, keeps its pace: every event, in order, soon after its write.
 */

const KEY = 'slow-consumer-key-0123456789abcdef';
const EVENTS = Number(process.env.FEED_LOAD_EVENTS ?? 50_000);
const WRITERS = 64;
/** Slow consumers at once: were the service to buffer for them, four copies of the log would pass the bound. */
const SLOW_CONSUMERS = 4;
/** Each pet's name: events of about 500 bytes, so that the log (about 25 MB) is far larger than any socket's buffers. */
const NAME = 'n'.repeat(200);
/** What the writes, a slow stream and a fast one may add to the service's resident memory. */
const RSS_BOUND_MB = 64;
/** How far behind the acknowledged writes the fast stream may be once they end. */
const CATCH_UP_MS = 10_000;

function residentMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) / 1024;
}

describe('event streams whose consumers read one byte a second', () => {
  it(`keeps the service within ${RSS_BOUND_MB} MB of its start, and another stream at its pace, over ${EVENTS} writes`, { timeout: 180_000 }, async () => {
    const directory = temporaryDirectory('slow-consumer');
    const service = startServiceProcess({ PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY });
    const auth = { authorization: `Bearer ${KEY}` };
    const slow = Array.from({ length: SLOW_CONSUMERS }, () => new Socket());
    const fast = new AbortController();
    try {
      const base = new URL(await service.listening);
      const pid = service.child.pid!;
      const create = async (name: string) => {
        const response = await fetch(`${base}/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name, categoryId: 1 }) });
        assert.equal(response.status, 201, await response.clone().text());
        await response.arrayBuffer();
      };
      // Warm the write path up before the baseline: the memory it takes is the service's, not the streams'.
      for (let index = 0; index < 200; index++) await create(`warm-up ${index}`);
      const after = 200;

      // The slow consumers: raw sockets whose bytes are taken one a second, the rest left in the kernel's buffers.
      let slowBytes = 0;
      for (const socket of slow) {
        socket.connect(Number(base.port), base.hostname);
        socket.pause();
        socket.write(`GET ${base.pathname}/events?after=${after} HTTP/1.1\r\nHost: ${base.host}\r\nAuthorization: Bearer ${KEY}\r\nAccept: text/event-stream\r\n\r\n`);
      }
      const trickle = setInterval(() => {
        for (const socket of slow) if (socket.read(1) !== null) slowBytes++;
      }, 1000);

      // The fast consumer: every event's id, in order, as it arrives.
      const received: number[] = [];
      const stream = await fetch(`${base}/events?after=${after}`, { headers: { ...auth, accept: 'text/event-stream' }, signal: fast.signal });
      assert.equal(stream.status, 200);
      const reading = (async () => {
        const decoder = new TextDecoder();
        const idLine = /\nid: (\d+)\n/g;
        let text = '';
        for await (const chunk of stream.body!) {
          text += decoder.decode(chunk, { stream: true });
          let consumed = 0;
          idLine.lastIndex = 0;
          for (let match; (match = idLine.exec(text)); consumed = idLine.lastIndex) received.push(Number(match[1]));
          text = text.slice(consumed);
        }
      })().catch(() => undefined);

      await delay(1000);
      const startMb = residentMb(pid);
      let peakMb = startMb;
      const sampling = setInterval(() => (peakMb = Math.max(peakMb, residentMb(pid))), 100);
      const writer = await openSqlitePetStore(directory.file('petstore.db'));
      let written = 0;
      try {
        await Promise.all(Array.from({ length: WRITERS }, async () => {
          while (written < EVENTS) await addPet(writer, { name: `${NAME} ${written++}`, categoryId: 1 });
        }));
      } finally {
        await writer.close();
      }
      const acknowledged = written;
      const deadline = Date.now() + CATCH_UP_MS;
      while (received.length < acknowledged && Date.now() < deadline) await delay(50);
      clearInterval(sampling);
      clearInterval(trickle);
      peakMb = Math.max(peakMb, residentMb(pid));

      assert.equal(received.length, acknowledged, `the fast stream had ${received.length} of ${acknowledged} events ${CATCH_UP_MS} ms after the last write`);
      assert.ok(received.every((id, index) => id === after + index + 1), 'the fast stream: every position once, in order');
      for (const socket of slow) {
        assert.ok(socket.readableLength < 1024 * 1024, 'a slow consumer took almost nothing');
        assert.ok(!socket.destroyed, 'a slow stream is still open');
      }
      assert.ok(peakMb - startMb < RSS_BOUND_MB, `the service grew by ${(peakMb - startMb).toFixed(1)} MB (from ${startMb.toFixed(1)} MB) with ${SLOW_CONSUMERS} slow consumers`);
      process.stdout.write(`# ${acknowledged} events written by ${WRITERS} writers in another process; the service's RSS ${startMb.toFixed(1)} → peak ${peakMb.toFixed(1)} MB (+${(peakMb - startMb).toFixed(1)}, bound ${RSS_BOUND_MB}); ${SLOW_CONSUMERS} slow consumers took ${slowBytes} bytes\n`);
      fast.abort();
      await reading;
    } finally {
      fast.abort();
      for (const socket of slow) socket.destroy();
      service.cleanup();
      directory.remove();
    }
  });
});
